/* SPDX-License-Identifier: MIT */
/*
 * pol_builtin.h - the ops tables of the built-in policies (one file each),
 * listed by the registry in policy.c.  Private to iosigd/policy.
 */
#ifndef POL_BUILTIN_H
#define POL_BUILTIN_H

#include "policy.h"

extern const struct policy_ops pol_noop_ops;
extern const struct policy_ops pol_deadline_ops;
extern const struct policy_ops pol_cfq_ops;
extern const struct policy_ops pol_bfq_ops;
extern const struct policy_ops pol_bid_hdd_ops;
extern const struct policy_ops pol_bid_hybrid_ops;
extern const struct policy_ops pol_mios_d_ops;
extern const struct policy_ops pol_mios_e_ops;
extern const struct policy_ops pol_burst_ops;
extern const struct policy_ops pol_nvcache_ops;

#endif /* POL_BUILTIN_H */
