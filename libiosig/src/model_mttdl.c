/* SPDX-License-Identifier: MIT */
/*
 * model_mttdl.c - reliability models of the IOSIG paper (docs/design.md §5.2):
 * the uncorrectable bit error rate (Eq. 1), the mean time to data loss of MDS
 * layouts (Eq. 2) and the probability of losing data within a lifetime.
 * docs/models.md derives every formula and states the edge cases.
 */
#include <errno.h>
#include <math.h>

#include "iosig.h"
#include "model.h"

/* ------------------------------------------------------------------------
 * UBER (Eq. 1)
 * ---------------------------------------------------------------------- */

/* Up to this many factors, C(N, k) is a product of exact ratios (at most
 * 32 factors of at most 2^32 stay below DBL_MAX); above, lgamma. */
#define BINOM_PRODUCT_MAX 32

/* Terms of the tail smaller than this fraction of the sum are dropped (and
 * the geometric bound below guarantees the dropped rest is smaller too). */
#define TAIL_EPS 1e-18

/* log C(n, k) for 0 <= k <= n, accurate to a few ulps for small min(k, n-k). */
static double log_binom(double n, double k)
{
	double kk = k < n - k ? k : n - k;
	int sign;

	if (kk <= BINOM_PRODUCT_MAX) {
		double c = 1;

		for (double j = 1; j <= kk; j++)
			c *= (n - kk + j) / j;
		return log(c);
	}
	/* lgamma_r: plain lgamma() writes the global signgam (not thread-safe). */
	return lgamma_r(n + 1, &sign) - lgamma_r(k + 1, &sign) - lgamma_r(n - k + 1, &sign);
}

/*
 * Eq. 1: UBER = sum_{n=E+1}^{N} C(N,n) p^n (1-p)^(N-n) / (N - E).
 *
 * The binomial terms are unimodal in n with the mode at floor((N+1) p).  The
 * sum starts at the largest term of the tail, n0 = max(E+1, mode), whose
 * logarithm comes from log_binom() + n0 log p + (N-n0) log1p(-p), and adds
 * the others relative to it (the ratio of neighbouring terms is exact and
 * cheap), walking away from n0 in both directions until the rest is provably
 * below TAIL_EPS of the sum: past the mode the ratio r of neighbouring terms
 * only shrinks, so everything beyond a term t is at most t r / (1 - r).  The
 * result is exp(log t(n0) + log(sum) - log(N - E)): nothing underflows before
 * the final exp, and no difference of nearly equal numbers is ever taken.
 */
double iosig_uber(double ber, unsigned sector_bits, unsigned ecc)
{
	double n_bits = sector_bits, e = ecc;
	double odds, mode, n0, log_t0, sum, t;

	if (!(ber >= 0 && ber <= 1) || sector_bits == 0)
		return NAN;
	if (ber == 0 || ecc >= sector_bits)
		return 0;
	if (ber == 1) /* only n = N survives: every bit of the sector is wrong */
		return 1 / (n_bits - e);

	odds = ber / (1 - ber);
	mode = floor((n_bits + 1) * ber);
	n0 = e + 1 > mode ? e + 1 : (mode > n_bits ? n_bits : mode);
	log_t0 = log_binom(n_bits, n0) + n0 * log(ber) + (n_bits - n0) * log1p(-ber);

	sum = 1;
	/* Upwards: t(n+1) / t(n) = (N - n) / (n + 1) * odds, decreasing in n. */
	t = 1;
	for (double n = n0; n < n_bits; n++) {
		double r = (n_bits - n) / (n + 1) * odds;

		t *= r;
		sum += t;
		r = (n_bits - n - 1) / (n + 2) * odds;  /* ratio of the next step */
		if (r < 1 && t * r <= TAIL_EPS * sum * (1 - r))
			break;
	}
	/* Downwards to E+1: t(n-1) / t(n) = n / (N - n + 1) / odds, decreasing as
	 * n decreases. */
	t = 1;
	for (double n = n0; n > e + 1; n--) {
		double r = n / (n_bits - n + 1) / odds;

		t *= r;
		sum += t;
		r = (n - 1) / (n_bits - n + 2) / odds;
		if (r < 1 && t * r <= TAIL_EPS * sum * (1 - r))
			break;
	}
	return exp(log_t0 + log(sum) - log(n_bits - e));
}

/* ------------------------------------------------------------------------
 * Layouts
 * ---------------------------------------------------------------------- */

static const char *const layout_names[] = {
	[IOSIG_LAYOUT_SINGLE] = "single",
	[IOSIG_LAYOUT_RAID0] = "raid0",
	[IOSIG_LAYOUT_RAID1] = "raid1",
	[IOSIG_LAYOUT_RAID10] = "raid10",
	[IOSIG_LAYOUT_RAID5] = "raid5",
	[IOSIG_LAYOUT_RAID6] = "raid6",
	[IOSIG_LAYOUT_REPLICATION] = "replication",
	[IOSIG_LAYOUT_ERASURE] = "erasure",
};

const char *iosig_layout_name(enum iosig_layout_kind kind)
{
	if ((unsigned)kind >= sizeof(layout_names) / sizeof(layout_names[0]))
		return "unknown";
	return layout_names[kind];
}

int mdl_layout_shape(const struct iosig_layout *layout, struct mdl_shape *ret_shape)
{
	unsigned d = layout->disks;
	struct mdl_shape s = { .groups = 1, .disks = d };

	switch (layout->kind) {
	case IOSIG_LAYOUT_SINGLE:
		if (d > 1)
			return -EINVAL;
		s.disks = 1;
		s.tolerated = 0;
		break;
	case IOSIG_LAYOUT_RAID0:
		if (d < 1)
			return -EINVAL;
		s.tolerated = 0;
		break;
	case IOSIG_LAYOUT_RAID1:
	case IOSIG_LAYOUT_REPLICATION:
		/* d copies: data survives while one copy is left. */
		if (d < 1)
			return -EINVAL;
		s.tolerated = d - 1;
		break;
	case IOSIG_LAYOUT_RAID10:
		/* Striped mirrors: d/2 independent pairs, each holding 1/(d/2) of
		 * the data and surviving one failure. */
		if (d < 2 || d % 2)
			return -EINVAL;
		s.groups = d / 2;
		s.disks = 2;
		s.tolerated = 1;
		break;
	case IOSIG_LAYOUT_RAID5:
		if (d < 2)
			return -EINVAL;
		s.tolerated = 1;
		break;
	case IOSIG_LAYOUT_RAID6:
		if (d < 3)
			return -EINVAL;
		s.tolerated = 2;
		break;
	case IOSIG_LAYOUT_ERASURE:
		/* n + m with n >= 1 data devices. */
		if (d < 1 || layout->tolerated >= d)
			return -EINVAL;
		s.tolerated = layout->tolerated;
		break;
	default:
		return -EINVAL;
	}
	*ret_shape = s;
	return 0;
}

bool mdl_params_valid(double mttf, double mttr, double uber, double size)
{
	return mttf > 0 && isfinite(mttf) && mttr > 0 && isfinite(mttr) && uber >= 0 &&
	       uber <= 1 && size >= 0 && isfinite(size);
}

/* ------------------------------------------------------------------------
 * MTTDL (Eq. 2)
 * ---------------------------------------------------------------------- */

/* Up to this many tolerated failures the direct product is tried first. */
#define MTTDL_LINEAR_MAX 8

/*
 * Eq. 2 for one group, divided by the number of groups:
 *
 *   MTTDL = mu^m / (d (d-1) ... (d-m) lambda^m (lambda + h_g mu)) / groups
 *         = MTTF rho^m / (groups d (d-1) ... (d-m) (1 + h_g rho))
 *
 * with rho = MTTF / MTTR = mu / lambda and h_g = h / groups the expected
 * number of uncorrectable errors in the group's share of the file.  The
 * second form has no mu^m or lambda^m that could overflow or underflow on
 * its own; it is evaluated directly for small m and in logarithms otherwise
 * (or when the direct product leaves the normal range).  m = 0: MTTF / d.
 */
double iosig_mttdl(const struct iosig_layout *layout, double mttf, double mttr, double uber,
		   double size)
{
	struct mdl_shape s;
	double rho, h_g, r, logr;

	if (!layout || mdl_layout_shape(layout, &s) || !mdl_params_valid(mttf, mttr, uber, size))
		return NAN;
	if (s.tolerated == 0)
		return mttf / ((double)s.disks * s.groups);

	rho = mttf / mttr;
	h_g = size * 8 * uber / s.groups;
	if (s.tolerated <= MTTDL_LINEAR_MAX) {
		r = mttf / ((double)s.groups * s.disks);
		for (unsigned j = 1; j <= s.tolerated; j++)
			r *= rho / (s.disks - j);
		r /= 1 + h_g * rho;
		if (isnormal(r))
			return r;
	}
	logr = log(mttf) + s.tolerated * log(rho) - log(s.groups) - log1p(h_g * rho);
	/* log(d (d-1) ... (d-m)) one logarithm per 16 factors (< 2^256). */
	for (unsigned j = 0; j <= s.tolerated;) {
		double p = 1;

		for (unsigned n = 0; n < 16 && j <= s.tolerated; n++, j++)
			p *= s.disks - j;
		logr -= log(p);
	}
	return exp(logr);
}

double iosig_mount_mttdl(const struct iosig_mount *mount, double size)
{
	if (!mount)
		return NAN;
	if (mount->volatile_)
		return 0;
	return iosig_mttdl(&mount->layout, mount->mttf, mount->mttr,
			   iosig_uber(mount->ber, mount->sector_bits, mount->ecc), size);
}

/* ------------------------------------------------------------------------
 * Availability
 * ---------------------------------------------------------------------- */

/*
 * P(loss within T) = 1 - exp(-T / MTTDL), the CDF of an exponential
 * lifetime.  -expm1(-x) keeps full relative precision for tiny x = T/MTTDL,
 * where 1 - exp(-x) would round to 0.
 */
double iosig_p_loss(double mttdl, double lifetime)
{
	if (!(mttdl >= 0) || !(lifetime >= 0))
		return NAN;
	if (lifetime == 0 || isinf(mttdl))
		return 0;
	if (mttdl == 0)
		return 1;
	return -expm1(-lifetime / mttdl);
}
