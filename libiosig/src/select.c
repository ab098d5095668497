/* SPDX-License-Identifier: MIT */
/*
 * select.c - choosing the mount for a file (docs/design.md §5.3).
 *
 * Filter the catalog by the signature's constraints (eligibility, global,
 * persist, archive, tamperproof, max file size, free space, MTTDL,
 * availability), then take the highest throughput predicted by Eq. 3 for the
 * declared size_per_io and pattern.  Ties are broken deterministically: the
 * original path's own mount first, then more free space, then the mount
 * point's name, so every process of a job makes the same choice from the
 * same inputs.
 *
 * The common call (cands == NULL) allocates nothing and computes the
 * reliability models only when a reliability constraint asks for them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "iosig.h"
#include "select_defaults.h"

/* Two predicted throughputs closer than this (relative) are a tie. */
#define TPUT_TIE_REL 1e-9

static const char *const verdict_names[] = {
	[IOSIG_V_OK] = "ok",
	[IOSIG_V_INELIGIBLE] = "ineligible",
	[IOSIG_V_GLOBAL] = "not-global",
	[IOSIG_V_PERSIST] = "volatile",
	[IOSIG_V_MTTDL] = "mttdl",
	[IOSIG_V_AVAILABILITY] = "availability",
	[IOSIG_V_ARCHIVE] = "not-archive",
	[IOSIG_V_TAMPER] = "not-tamperproof",
	[IOSIG_V_SPACE] = "space",
	[IOSIG_V_FILESIZE] = "filesize",
};

const char *iosig_verdict_name(enum iosig_verdict verdict)
{
	if ((unsigned)verdict >= sizeof(verdict_names) / sizeof(verdict_names[0]))
		return "unknown";
	return verdict_names[verdict];
}

/* The signature with the documented defaults for missing descriptive values. */
static void fill_defaults(const struct iosig_sig *sig, struct iosig_sig *eff)
{
	*eff = *sig;
	if (!(eff->set & IOSIG_HAS(IOSIG_P_SIZE_PER_IO)) || eff->size_per_io == 0)
		eff->size_per_io = SELECT_DEFAULT_SIZE_PER_IO;
	if (!(eff->set & IOSIG_HAS(IOSIG_P_LIFETIME)) || !(eff->lifetime > 0))
		eff->lifetime = SELECT_DEFAULT_LIFETIME;
}

/* Size whose reliability is judged: the declared total size, else a default. */
static double file_size(const struct iosig_sig *sig)
{
	if ((sig->set & IOSIG_HAS(IOSIG_P_TOTALSIZE)) && sig->totalsize > 0)
		return (double)sig->totalsize;
	return SELECT_DEFAULT_FILE_SIZE;
}

/*
 * Judges one mount.  Fills *c (throughput, reliability figures, and the
 * reason in words when `explain`) and returns the verdict.
 */
static int judge(const struct iosig_mount *m, const struct iosig_sig *eff, bool explain,
		 struct iosig_candidate *c)
{
	uint32_t set = eff->set;
	bool random = set & IOSIG_HAS(IOSIG_P_RANDOM);
	bool need_rel = set & (IOSIG_HAS(IOSIG_P_MIN_MTTDL) | IOSIG_HAS(IOSIG_P_AVAILABILITY));
	double size = file_size(eff);
	char a[32], b[32];

	c->mount = m;
	c->throughput = iosig_throughput(m, eff->size_per_io, random, IOSIG_OP_WRITE);
	c->mttdl = NAN;
	c->p_loss = NAN;
	if (need_rel || explain) {
		c->mttdl = iosig_mount_mttdl(m, size);
		c->p_loss = iosig_p_loss(c->mttdl, eff->lifetime);
	}
	if (explain)
		c->why[0] = '\0';

#define REJECT(v, ...)                                                    \
	do {                                                              \
		if (explain)                                              \
			snprintf(c->why, sizeof(c->why), __VA_ARGS__);    \
		return c->verdict = (v);                                  \
	} while (0)

	if (m->ineligible)
		REJECT(IOSIG_V_INELIGIBLE, "%s", m->ineligible);
	if ((set & IOSIG_HAS(IOSIG_P_GLOBAL)) && !m->global)
		REJECT(IOSIG_V_GLOBAL, "global requested, but the mount is node-local");
	if ((set & IOSIG_HAS(IOSIG_P_PERSIST)) && m->volatile_)
		REJECT(IOSIG_V_PERSIST, "persist requested, but the mount is volatile");
	if ((set & IOSIG_HAS(IOSIG_P_ARCHIVE)) && !(m->labels & IOSIG_LABEL_ARCHIVE))
		REJECT(IOSIG_V_ARCHIVE, "archive requested, but the mount is not labelled archive");
	if ((set & IOSIG_HAS(IOSIG_P_TAMPER)) && !(m->labels & IOSIG_LABEL_TAMPERPROOF))
		REJECT(IOSIG_V_TAMPER,
		       "tamperproof requested, but the mount is not labelled tamperproof");
	if (m->max_filesize && (set & IOSIG_HAS(IOSIG_P_TOTALSIZE)) &&
	    eff->totalsize > m->max_filesize)
		REJECT(IOSIG_V_FILESIZE, "totalsize %s exceeds the maximum file size %s",
		       fmt_bytes((double)eff->totalsize, a, sizeof(a)),
		       fmt_bytes((double)m->max_filesize, b, sizeof(b)));
	{
		/* free >= size + reserve, without overflow.  An undeclared size is
		 * the default one: a mount with room for only a little more than
		 * the reserve could fail a write the original path would take. */
		bool declared = set & IOSIG_HAS(IOSIG_P_TOTALSIZE);
		uint64_t need = declared ? eff->totalsize : (uint64_t)SELECT_DEFAULT_FILE_SIZE;

		if (m->free < m->reserve || m->free - m->reserve < need)
			REJECT(IOSIG_V_SPACE, "needs %s%s plus a reserve of %s, %s free",
			       fmt_bytes((double)need, a, sizeof(a)),
			       declared ? "" : " (the default size: declare totalsize)",
			       fmt_bytes((double)m->reserve, b, sizeof(b)),
			       fmt_bytes((double)m->free, (char[32]){ 0 }, 32));
	}
	if ((set & IOSIG_HAS(IOSIG_P_MIN_MTTDL)) && m->volatile_)
		REJECT(IOSIG_V_MTTDL, "min_mttdl %s requested, but the mount is volatile "
		       "(no persistence, MTTDL 0)", fmt_duration(eff->min_mttdl, a, sizeof(a)));
	if ((set & IOSIG_HAS(IOSIG_P_MIN_MTTDL)) && !(c->mttdl >= eff->min_mttdl))
		REJECT(IOSIG_V_MTTDL, "MTTDL %s for %s is below the required %s",
		       fmt_duration(c->mttdl, a, sizeof(a)), fmt_bytes(size, b, sizeof(b)),
		       fmt_duration(eff->min_mttdl, (char[32]){ 0 }, 32));
	if ((set & IOSIG_HAS(IOSIG_P_AVAILABILITY)) && !(c->p_loss <= eff->availability))
		REJECT(IOSIG_V_AVAILABILITY,
		       "P(loss) %.3g over %s exceeds the allowed %.3g",
		       c->p_loss, fmt_duration(eff->lifetime, a, sizeof(a)), eff->availability);
#undef REJECT

	if (explain)
		snprintf(c->why, sizeof(c->why), "satisfies all constraints; predicted %s",
			 fmt_rate(c->throughput, a, sizeof(a)));
	return c->verdict = IOSIG_V_OK;
}

/* The original path's mount, looked up only when a tie needs it (the lookup
 * resolves the path: system calls we avoid on the common path). */
struct orig_mount {
	const struct iosig_catalog *catalog;
	const char *path;
	const struct iosig_mount *mount;
	bool looked_up;
};

static const struct iosig_mount *orig_get(struct orig_mount *o)
{
	if (!o->looked_up) {
		o->mount = o->path ? iosig_catalog_find(o->catalog, o->path) : NULL;
		o->looked_up = true;
	}
	return o->mount;
}

/* True when candidate x beats the current best y (both satisfy everything). */
static bool better(const struct iosig_candidate *x, const struct iosig_candidate *y,
		   struct orig_mount *o)
{
	double tx = x->throughput, ty = y->throughput;
	double scale = fmax(fabs(tx), fabs(ty));
	const struct iosig_mount *orig;

	if (fabs(tx - ty) > TPUT_TIE_REL * scale)
		return tx > ty;
	orig = orig_get(o);
	if ((x->mount == orig) != (y->mount == orig))
		return x->mount == orig;
	if (x->mount->free != y->mount->free)
		return x->mount->free > y->mount->free;
	return strcmp(x->mount->path, y->mount->path) < 0;
}

int iosig_select(const struct iosig_catalog *catalog, const struct iosig_sig *sig,
		 const char *orig_path, struct iosig_candidate *cands,
		 struct iosig_choice *ret_choice)
{
	struct iosig_choice choice = { .index = -1 };
	struct iosig_candidate best = { 0 }, tmp;
	struct orig_mount orig = { .catalog = catalog, .path = orig_path };
	size_t n;

	if (!catalog || !sig || !ret_choice)
		return -EINVAL;
	fill_defaults(sig, &choice.effective);
	n = iosig_catalog_size(catalog);

	for (size_t i = 0; i < n; i++) {
		const struct iosig_mount *m = iosig_catalog_mount(catalog, i);
		struct iosig_candidate *c = cands ? &cands[i] : &tmp;

		if (judge(m, &choice.effective, cands != NULL, c) != IOSIG_V_OK)
			continue;
		choice.eligible++;
		if (choice.index < 0 || better(c, &best, &orig)) {
			best = *c;
			choice.index = (int)i;
		}
	}
	if (choice.index >= 0) {
		choice.mount = best.mount;
		choice.throughput = best.throughput;
	}
	*ret_choice = choice;
	return 0;
}
