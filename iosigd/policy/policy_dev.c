/* SPDX-License-Identifier: MIT */
/*
 * policy_dev.c - a device as the catalog describes it (struct iosig_mount,
 * libiosig's public types) as the policies see it (struct policy_dev_info).
 * The daemon describes its devices with this; the simulator builds its own
 * from its device models.  Only iosig.h's types are read: the policy
 * library does not link libiosig.
 */
#include <errno.h>
#include <stdint.h>

#include "policy.h"

int policy_dev_from_mount(const struct iosig_mount *m, const char *name, uint32_t queue_depth,
			  struct policy_dev_info *ret)
{
	if (!m || !ret || queue_depth == 0 || m->cls >= IOSIG_CLASS_COUNT ||
	    m->block_size > UINT32_MAX)
		return -EINVAL;
	*ret = (struct policy_dev_info){
		.name = name ? name : m->path,
		.cls = (enum iosig_class)m->cls,
		.capacity = m->capacity,
		.queue_depth = queue_depth,
		.block_size = (uint32_t)m->block_size,
		.bcw = m->bcw,
	};
	return 0;
}
