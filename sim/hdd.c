/* SPDX-License-Identifier: MIT */
/*
 * hdd.c - the hard-disk model (see hdd.h and docs/sim.md).
 *
 * Time is kept in double nanoseconds inside the model (rotational angles
 * need fractions of a sector) and returned as integer ns.  The mechanism is
 * simulated request by request:
 *
 *   host command -> controller overhead (by op, hit/miss, previous op)
 *     read hit:   + bus transfer
 *     read miss:  wait for the mechanism (destages), seek (table or curve)
 *                 or head switch, rotational wait to the first sector,
 *                 media transfer sector by sector across track and
 *                 cylinder switches (skews), bus transfer overlapped;
 *                 then read-ahead continues in the background until the
 *                 next command needs the mechanism
 *     write-back: + bus transfer, acknowledged; the destage (seek, settle,
 *                 rotation, media) runs in the background
 *     write-through: like a read miss plus write settling
 *     BCW:        Fast/Mid/Slow latency from the buffered-write state machine
 *
 * Every change of cylinder counts as one arm movement of |distance|
 * cylinders (the BID paper's head movements and TMD).
 */
#include "hdd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

struct seg {
	bool used;
	uint64_t start, end;     /* valid sectors [start, end) */
	double clean_at;         /* ns when its data is on the media (write data) */
	uint64_t stamp;          /* last use, for LRU replacement */
};

/* Sequential media access in progress: the head reaches the start of
 * sector `next` at time `t` having transferred everything before it, or,
 * with `pending`, has just finished the track before `next` at `t` and
 * still has to switch to next's track. */
struct stream {
	uint64_t next;
	double t;
	bool pending;
};

struct sim_hdd {
	struct sim_hdd_params p;
	double rot_ns;           /* one revolution */
	double sect_ns[SIM_HDD_MAX_ZONES];  /* media time of one sector per zone */
	double xfer_ns;          /* bus time per sector */

	uint32_t cyl, head;      /* arm position after the last scheduled mechanical work */
	double mech_free;        /* mechanism idle from (destages, foreground media) */
	double fg_free;          /* previous command completed (interface free) */
	bool last_write;         /* previous command was a write */

	struct seg *seg;
	uint64_t stamp;

	uint64_t prev_read_last; /* last sector of the previous read (UINT64_MAX: none) */
	bool pf_active;          /* read-ahead running into segment pf_seg */
	unsigned pf_seg;
	uint64_t pf_limit;       /* read-ahead stops before this sector */
	struct stream pf;

	int bcw_state;           /* 0 = Fast, 1 = Mid */
	double bcw_adw;          /* bytes written in the current state */
	double bcw_dirty;        /* bytes in the buffer not yet on the media */
	double bcw_t;            /* time bcw_dirty was last updated */

	struct sim_hdd_stats st;
	sim_hdd_arm_fn arm_fn;
	void *arm_ctx;
};

/* ---- parameters ---- */

void sim_hdd_params_generic(struct sim_hdd_params *p, uint64_t bytes)
{
	const unsigned nz = 16;
	const uint32_t outer = 2400, inner = 1200;
	uint64_t sectors, per_cyl_avg;
	uint32_t cyls, per_zone;
	double single = 0.6, avg = 8.5, full = 16.0;

	memset(p, 0, sizeof(*p));
	if (!bytes)
		bytes = 1ull << 40;
	snprintf(p->name, sizeof(p->name), "generic");
	p->surfaces = 4;
	sectors = bytes / SIM_SECTOR;
	per_cyl_avg = (uint64_t)p->surfaces * (outer + inner) / 2;
	cyls = (uint32_t)((sectors + per_cyl_avg - 1) / per_cyl_avg) + nz;
	per_zone = (cyls + nz - 1) / nz;
	cyls = per_zone * nz;
	p->cylinders = cyls;
	p->sparing = SIM_SPARE_NONE;
	p->range_size = 1;
	p->nzones = nz;
	for (unsigned i = 0; i < nz; i++) {
		struct sim_hdd_zone *z = &p->zone[i];

		z->first_cyl = i * per_zone;
		z->last_cyl = (i + 1) * per_zone - 1;
		z->bpt = outer - (uint32_t)((uint64_t)(outer - inner) * i / (nz - 1));
		z->track_skew = z->bpt * 0.05;   /* covers a 0.4 ms head switch at 7200 rpm */
		z->cyl_skew = z->bpt * 0.08;     /* covers a 0.6 ms one-cylinder seek */
	}
	p->blocks = sectors;
	p->rpm = 7200;
	/* Ruemmler-Wilkes curve through (1, single), (cyls/3, avg), (cyls, full). */
	p->seek_kind = SIM_SEEK_CURVE;
	p->rw_boundary = cyls / 3;
	p->rw_b = (avg - single) / (sqrt((double)p->rw_boundary) - 1);
	p->rw_a = single - p->rw_b;
	p->rw_e = (full - avg) / (double)(cyls - p->rw_boundary);
	p->rw_c = avg - p->rw_e * p->rw_boundary;
	p->seek_one_ms = single;
	p->head_switch_ms = 0.4;
	p->write_settle_ms = 0.1;
	for (int i = 0; i < 8; i++)
		p->ovh_ms[i] = (i & 4) ? 0.15 : 0.1;
	p->xfer_ms = 512.0 / 600e6 * 1e3;   /* 6 Gb/s SATA */
	p->nsegs = 16;
	p->seg_blocks = 4096;
	p->max_write_segs = 8;
	p->max_readahead = 2048;
	p->contread = SIM_RA_SEGMENT;
	p->fast_write = 2;
	p->read_hits_on_write_data = true;
	p->readahead_on_idle_hit = true;
	/* BCW defaults: the 10 TB WD drive of the BCW paper, 64 KiB writes. */
	p->bcw_wf = 16.0 * 1024 * 1024;
	p->bcw_wm = 8.0 * 1024 * 1024;
	p->bcw_lf_ms = 0.180;
	p->bcw_lm_ms = 0.280;
	p->bcw_ls_ms = 12.0;
	p->queue_depth = 1;
}

/* ---- layout: DiskSim's mapping and sparing schemes ---- */

static bool slip_to_end(enum sim_hdd_sparing sp)
{
	return sp == SIM_SPARE_PER_CYL_SLIP_END || sp == SIM_SPARE_PER_CYL_FRONT_SLIP_END ||
	       sp == SIM_SPARE_AT_END || sp == SIM_SPARE_PER_ZONE_SLIP_END;
}

/* Slips use their unit's spares (schemes 1, 2, 3, 5, 8, 9). */
static bool slips_use_spares(enum sim_hdd_sparing sp)
{
	return sp != SIM_SPARE_NONE && !slip_to_end(sp);
}

/* Schemes whose slips also turn the later tracks' first sectors (DiskSim's
 * g1_map_pbn_skew: sectors-per-cylinder and per-track sparing). */
static bool slips_push_skew(enum sim_hdd_sparing sp)
{
	return sp == SIM_SPARE_PER_CYL || sp == SIM_SPARE_PER_TRACK ||
	       sp == SIM_SPARE_PER_CYL_SLIP_END || sp == SIM_SPARE_PER_CYL_FRONT ||
	       sp == SIM_SPARE_PER_CYL_FRONT_SLIP_END;
}

/* Number of entries of the sorted a[0..n) that are <= v. */
static uint64_t count_le(const uint64_t *a, uint32_t n, uint64_t v)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The x-th (from 0) of 0, 1, 2, ... that is not in the sorted list a[0..n);
 * *ret_next = the next listed value after it (UINT64_MAX if none). */
static uint64_t skip_listed(const uint64_t *a, uint32_t n, uint64_t x, uint64_t *ret_next)
{
	uint64_t t = x, c;

	/* t = x + (listed values <= t) has its least solution at the answer. */
	while ((c = count_le(a, n, t)) != t - x)
		t = x + c;
	*ret_next = c < n ? a[c] : UINT64_MAX;
	return t;
}

/*
 * Logical blocks of a zone, as DiskSim counts them (layout_g1_load.c,
 * dm_layout_g1_compute_blksinband): negative means the spares and the empty
 * space take more than the zone has.
 */
static int64_t zone_lbns(const struct sim_hdd_params *p, const struct sim_hdd_zone *z)
{
	int64_t cyls = (int64_t)z->last_cyl - z->first_cyl + 1, sp = z->spares;
	int64_t n = cyls * p->surfaces * z->bpt - z->deadspace;

	switch (p->sparing) {
	case SIM_SPARE_NONE:
		break;
	case SIM_SPARE_TRACK:
		n -= sp * z->bpt;
		break;
	case SIM_SPARE_PER_CYL:
	case SIM_SPARE_PER_CYL_FRONT:
		n -= sp * cyls;
		break;
	case SIM_SPARE_PER_TRACK:
		n -= sp * cyls * p->surfaces;
		break;
	case SIM_SPARE_PER_CYL_SLIP_END:
	case SIM_SPARE_PER_CYL_FRONT_SLIP_END:
		n -= sp * cyls + z->nslips;
		break;
	case SIM_SPARE_AT_END:
		n -= z->nslips;
		break;
	case SIM_SPARE_PER_RANGE:
		n -= sp * (cyls / p->range_size);
		break;
	case SIM_SPARE_PER_ZONE:
		n -= sp;
		break;
	case SIM_SPARE_PER_ZONE_SLIP_END:
		n -= sp + z->nslips;
		break;
	}
	return n;
}

/* Sets a zone's sparing unit: its size, data sectors, front spares, count. */
static void zone_units(const struct sim_hdd_params *p, struct sim_hdd_zone *z)
{
	uint64_t cyl = (uint64_t)z->bpt * p->surfaces;

	z->nphys = ((uint64_t)z->last_cyl - z->first_cyl + 1) * cyl;
	z->ufront = 0;
	switch (p->sparing) {
	case SIM_SPARE_PER_TRACK:
		z->unit = z->bpt;
		break;
	case SIM_SPARE_PER_CYL:
	case SIM_SPARE_PER_CYL_SLIP_END:
	case SIM_SPARE_PER_CYL_FRONT:
	case SIM_SPARE_PER_CYL_FRONT_SLIP_END:
		z->unit = cyl;
		z->ufront = p->sparing == SIM_SPARE_PER_CYL_FRONT ||
			    p->sparing == SIM_SPARE_PER_CYL_FRONT_SLIP_END ? z->spares : 0;
		break;
	case SIM_SPARE_PER_RANGE:
		z->unit = cyl * p->range_size;
		break;
	default:   /* none, whole tracks, at the end of the disk, per zone: the zone */
		z->unit = z->nphys;
		break;
	}
	z->udata = z->unit;
	if (p->sparing != SIM_SPARE_NONE && p->sparing != SIM_SPARE_TRACK &&
	    p->sparing != SIM_SPARE_AT_END)
		z->udata -= z->spares < z->unit ? z->spares : z->unit;
	z->nunits = z->nphys / z->unit;
}

/* Logical track order within cylinder cyl of zone z -> surface, and back
 * (the serpentine mappings reverse every other cylinder; an involution). */
static uint32_t track_surface(const struct sim_hdd_params *p, const struct sim_hdd_zone *z,
			      uint32_t cyl, uint32_t t)
{
	bool rev = (p->mapping == SIM_MAP_SERPENTINE_ZONE && (cyl - z->first_cyl) % 2) ||
		   (p->mapping == SIM_MAP_SERPENTINE && cyl % 2);

	return rev ? p->surfaces - 1 - t : t;
}

/* Zone holding lbn (binary search); lbn < p->blocks. */
static unsigned zone_of(const struct sim_hdd_params *p, uint64_t lbn)
{
	unsigned lo = 0, hi = p->nzones;

	while (hi - lo > 1) {
		unsigned mid = (lo + hi) / 2;

		if (p->zone[mid].first_lbn <= lbn)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Zone-relative physical sector of data position x of zone z (x counts the
 * zone's logical blocks from the empty space at its front); *ret_run = how
 * many positions from x on lie on consecutive sectors (bounded by the next
 * slip, spare or defect, not yet by the track end).
 */
static uint64_t zone_sector(const struct sim_hdd_params *p, const struct sim_hdd_zone *z,
			    uint64_t x, uint64_t *ret_run)
{
	const uint64_t *sl = &p->slip[z->slip0];
	uint64_t run, ps, next, u, pos, j;
	uint32_t i;

	switch (p->sparing) {
	case SIM_SPARE_NONE:
		/* DiskSim's no-sparing mapping ignores slips and defects. */
		*ret_run = z->nphys - x;
		return x;
	case SIM_SPARE_TRACK: {
		uint64_t trk = skip_listed(sl, z->nslips, x / z->bpt, &next);
		const uint64_t (*d)[2] = &p->defect[z->defect0];

		for (i = 0; i < z->ndefects; i++)
			if (d[i][0] == trk) {
				trk = d[i][1];
				break;
			}
		*ret_run = z->bpt - x % z->bpt;
		return trk * z->bpt + x % z->bpt;
	}
	default:
		break;
	}
	if (slip_to_end(p->sparing)) {
		/* The x-th data position not slipped, counting every slip of the zone. */
		j = skip_listed(&p->slip_pos[z->slip0], z->nslip_pos, x, &next);
		run = next - j;
		u = j / z->udata;
		pos = z->ufront + j % z->udata;
		if (run > z->udata - j % z->udata)
			run = z->udata - j % z->udata;
	} else if (x >= z->nunits * z->udata) {
		/* The partial last range of SIM_SPARE_PER_RANGE: no spares, no slips. */
		u = z->nunits;
		pos = x - z->nunits * z->udata;
		run = z->nphys - z->nunits * z->unit - pos;
	} else {
		/* The unit's slips use its spares: its data sectors are the first
		 * udata + n (n slips) not slipped after the end spares, or the
		 * last ones before the front spares (which give up one sector per
		 * slip). */
		uint64_t base, lo, hi, start;

		u = x / z->udata;
		base = u * z->unit;
		lo = base ? count_le(sl, z->nslips, base - 1) : 0;
		hi = count_le(sl, z->nslips, base + z->unit - 1);
		start = z->ufront ? z->ufront - (hi - lo) : 0;   /* validated: n <= spares */
		pos = start + x % z->udata;
		run = UINT64_MAX;
		for (i = (uint32_t)lo; i < hi; i++) {
			uint64_t q = sl[i] - base;

			if (q > pos) {
				run = q - pos;
				break;
			}
			pos++;
		}
		if (run > start + z->udata + (hi - lo) - pos)
			run = start + z->udata + (hi - lo) - pos;
	}
	ps = u * z->unit + pos;
	/* Defects: the block's sector may be replaced; a run stops before the
	 * next defective sector. */
	if (z->ndefects) {
		const uint64_t (*d)[2] = &p->defect[z->defect0];
		uint32_t lo = 0, hi = z->ndefects;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (d[mid][0] < ps)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < z->ndefects && d[lo][0] == ps) {
			*ret_run = 1;
			return d[lo][1];
		}
		if (lo < z->ndefects && run > d[lo][0] - ps)
			run = d[lo][0] - ps;
	}
	*ret_run = run;
	return ps;
}

/* Maps lbn; *ret_run = how many consecutive blocks from lbn lie on the same
 * track, physically contiguous. */
static bool map_run(const struct sim_hdd_params *p, uint64_t lbn, struct sim_hdd_pbn *ret,
		    uint64_t *ret_run)
{
	const struct sim_hdd_zone *z;
	uint64_t ps, run, track, sector;
	unsigned zi;

	if (lbn >= p->blocks)
		return false;
	zi = zone_of(p, lbn);
	z = &p->zone[zi];
	ps = zone_sector(p, z, lbn - z->first_lbn + z->deadspace, &run);
	track = ps / z->bpt;
	sector = ps % z->bpt;
	if (run > z->bpt - sector)
		run = z->bpt - sector;
	if (run > z->first_lbn + z->nlbn - lbn)
		run = z->first_lbn + z->nlbn - lbn;
	ret->zone = zi;
	ret->cyl = z->first_cyl + (uint32_t)(track / p->surfaces);
	ret->track = (uint32_t)(track % p->surfaces);
	ret->head = track_surface(p, z, ret->cyl, ret->track);
	ret->sector = (uint32_t)sector;
	if (ret_run)
		*ret_run = run;
	return true;
}

bool sim_hdd_map(const struct sim_hdd_params *p, uint64_t lbn, struct sim_hdd_pbn *ret)
{
	return map_run(p, lbn, ret, NULL);
}

/* Angle of the start of a sector, in revolutions [0, 1): the zone's first
 * block offset, a track skew per track switch and a cylinder skew per
 * cylinder switch in mapping order, and (DiskSim) one sector per slip
 * before the cylinder (track) in the schemes whose slips push the skew. */
static double sector_angle(const struct sim_hdd_params *p, const struct sim_hdd_pbn *b)
{
	const struct sim_hdd_zone *z = &p->zone[b->zone];
	double cylrel = (double)(b->cyl - z->first_cyl);
	double tracksw = b->track + (double)(p->surfaces - 1) * cylrel;
	double s = z->first_offset + tracksw * z->track_skew + cylrel * z->cyl_skew + b->sector;

	if (z->nslips && slips_push_skew(p->sparing)) {
		uint64_t tracks = (uint64_t)(b->cyl - z->first_cyl) * p->surfaces;

		if (p->sparing == SIM_SPARE_PER_TRACK)
			tracks += b->track;
		if (tracks)
			s += (double)count_le(&p->slip[z->slip0], z->nslips, tracks * z->bpt - 1);
	}
	/* s / bpt modulo 1, without fmod (slow for large quotients). */
	s /= z->bpt;
	return s - floor(s);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_pair(const void *a, const void *b)
{
	return cmp_u64(a, b);
}

/*
 * Checks zone i's slips and defects against its geometry and derives the
 * slip-to-end positions.  0 or -EINVAL with a reason.
 */
static int zone_check_spares(struct sim_hdd_params *p, unsigned i, char *err, size_t errlen)
{
	struct sim_hdd_zone *z = &p->zone[i];
	bool tracks = p->sparing == SIM_SPARE_TRACK;
	uint64_t limit = tracks ? z->nphys / z->bpt : z->nphys;
	uint64_t *sl = &p->slip[z->slip0];
	uint64_t (*d)[2] = &p->defect[z->defect0];
	const char *what = tracks ? "track" : "sector";

	if (z->slip0 + (uint64_t)z->nslips > p->nslip ||
	    z->defect0 + (uint64_t)z->ndefects > p->ndefect) {
		snprintf(err, errlen, "%s: zone %u: slips or defects out of the lists", p->name, i);
		return -EINVAL;
	}
	qsort(sl, z->nslips, sizeof(*sl), cmp_u64);
	qsort(d, z->ndefects, sizeof(*d), cmp_pair);
	for (uint32_t k = 0; k < z->nslips; k++)
		if (sl[k] >= limit || (k && sl[k] == sl[k - 1])) {
			snprintf(err, errlen, "%s: zone %u: slip %llu is %s (the zone has %s 0 to "
				 "%llu)", p->name, i, (unsigned long long)sl[k],
				 sl[k] >= limit ? "beyond the zone" : "listed twice",
				 tracks ? "tracks" : "sectors", (unsigned long long)(limit - 1));
			return -EINVAL;
		}
	for (uint32_t k = 0; k < z->ndefects; k++)
		if (d[k][0] >= limit || d[k][1] >= limit || (k && d[k][0] == d[k - 1][0])) {
			snprintf(err, errlen, "%s: zone %u: defect %llu -> %llu: a %s beyond the zone "
				 "(0 to %llu) or listed twice", p->name, i,
				 (unsigned long long)d[k][0], (unsigned long long)d[k][1], what,
				 (unsigned long long)(limit - 1));
			return -EINVAL;
		}
	if (tracks && z->nslips + z->ndefects > z->spares) {
		/* DiskSim asserts the same (layout_g1_load.c). */
		snprintf(err, errlen, "%s: zone %u: %u slipped and %u remapped tracks but only %u "
			 "spare tracks", p->name, i, z->nslips, z->ndefects, z->spares);
		return -EINVAL;
	}
	if (slips_use_spares(p->sparing) && !tracks) {
		/* Each unit's slips must fit in its spares, or blocks would land
		 * on the next unit's sectors (DiskSim does not check). */
		for (uint32_t k = 0, n; k < z->nslips; k += n) {
			uint64_t u = sl[k] / z->unit;

			for (n = 1; k + n < z->nslips && sl[k + n] / z->unit == u; n++)
				;
			if (sl[k] % z->unit < z->ufront) {
				snprintf(err, errlen, "%s: zone %u: slip %llu lies in a spare sector",
					 p->name, i, (unsigned long long)sl[k]);
				return -EINVAL;
			}
			if (u >= z->nunits || n > z->spares) {
				snprintf(err, errlen, "%s: zone %u: %u slips in %s %llu but %s spares", p->name,
					 i, n, p->sparing == SIM_SPARE_PER_TRACK ? "track" :
					 p->sparing == SIM_SPARE_PER_RANGE ? "range of cylinders" :
					 p->sparing == SIM_SPARE_PER_ZONE ? "the zone, unit" : "cylinder",
					 (unsigned long long)u, u >= z->nunits ? "it has no" : "fewer");
				return -EINVAL;
			}
		}
	}
	if (slip_to_end(p->sparing)) {
		/* Each slip's index among the data positions (spares excluded). */
		for (uint32_t k = 0; k < z->nslips; k++) {
			uint64_t u = sl[k] / z->unit, q = sl[k] % z->unit;

			p->slip_pos[z->slip0 + k] = q >= z->ufront && q < z->ufront + z->udata
						    ? u * z->udata + q - z->ufront : UINT64_MAX;
		}
		qsort(&p->slip_pos[z->slip0], z->nslips, sizeof(uint64_t), cmp_u64);
		/* Slips in spares do not move blocks (DiskSim still counts them). */
		z->nslip_pos = (uint32_t)count_le(&p->slip_pos[z->slip0], z->nslips, UINT64_MAX - 1);
	}
	return 0;
}

int sim_hdd_params_finish(struct sim_hdd_params *p, char *err, size_t errlen)
{
	uint64_t lbn = 0;

	if (!p->surfaces || !p->cylinders || !p->nzones || p->nzones > SIM_HDD_MAX_ZONES) {
		snprintf(err, errlen, "%s: needs surfaces, cylinders and 1..%d zones", p->name,
			 SIM_HDD_MAX_ZONES);
		return -EINVAL;
	}
	if (!(p->rpm > 0) || p->xfer_ms < 0 || p->seek_one_ms < 0 || p->head_switch_ms < 0) {
		snprintf(err, errlen, "%s: rpm must be positive and times non-negative", p->name);
		return -EINVAL;
	}
	if (p->range_size < 1)
		p->range_size = 1;
	if ((unsigned)p->mapping > SIM_MAP_MAX || (unsigned)p->sparing > SIM_SPARE_MAX) {
		snprintf(err, errlen, "%s: mapping scheme %u or sparing scheme %u unknown", p->name,
			 (unsigned)p->mapping, (unsigned)p->sparing);
		return -EINVAL;
	}
	for (unsigned i = 0; i < p->nzones; i++) {
		struct sim_hdd_zone *z = &p->zone[i];
		int64_t n;
		int r;

		if (!z->bpt || z->last_cyl < z->first_cyl) {
			snprintf(err, errlen, "%s: zone %u (cylinders %u-%u, %u sectors per track) is "
				 "empty", p->name, i, z->first_cyl, z->last_cyl, z->bpt);
			return -EINVAL;
		}
		/* Zones may be listed in any cylinder order (blocks follow the
		 * list, as in DiskSim) and leave cylinders out, but two zones
		 * cannot share a cylinder. */
		for (unsigned k = 0; k < i; k++)
			if (z->first_cyl <= p->zone[k].last_cyl && p->zone[k].first_cyl <= z->last_cyl) {
				snprintf(err, errlen, "%s: zones %u (cylinders %u-%u) and %u (cylinders "
					 "%u-%u) overlap", p->name, k, p->zone[k].first_cyl,
					 p->zone[k].last_cyl, i, z->first_cyl, z->last_cyl);
				return -EINVAL;
			}
		/* A zone reaching past the cylinder count extends the drive:
		 * DiskSim reads its zone table as it is. */
		if (z->last_cyl >= p->cylinders)
			p->cylinders = z->last_cyl + 1;
		zone_units(p, z);
		if (z->nunits && !z->udata) {
			snprintf(err, errlen, "%s: zone %u: %u spares fill every sparing unit of %llu "
				 "sectors", p->name, i, z->spares, (unsigned long long)z->unit);
			return -EINVAL;
		}
		r = zone_check_spares(p, i, err, errlen);
		if (r < 0)
			return r;
		n = zone_lbns(p, z);
		if (n <= 0) {
			snprintf(err, errlen, "%s: zone %u has no usable sector (%llu sectors, %u empty "
				 "at the front, %u spares, %u slips)", p->name, i,
				 (unsigned long long)z->nphys, z->deadspace, z->spares, z->nslips);
			return -EINVAL;
		}
		z->first_lbn = lbn;
		z->nlbn = (uint64_t)n;
		lbn += z->nlbn;
	}
	if (!p->blocks)
		p->blocks = lbn;
	if (p->blocks > lbn) {
		snprintf(err, errlen, "%s: block count %llu exceeds the %llu sectors of the zones",
			 p->name, (unsigned long long)p->blocks, (unsigned long long)lbn);
		return -EINVAL;
	}
	if (p->seek_kind == SIM_SEEK_TABLE && !p->nseek) {
		snprintf(err, errlen, "%s: empty seek table", p->name);
		return -EINVAL;
	}
	if (p->seek_kind == SIM_SEEK_CURVE && !p->rw_boundary)
		p->rw_boundary = 1;
	if (p->nsegs && !p->seg_blocks) {
		snprintf(err, errlen, "%s: cache segments of 0 sectors", p->name);
		return -EINVAL;
	}
	if (p->max_write_segs > p->nsegs)
		p->max_write_segs = p->nsegs;
	if (p->fast_write && !p->max_write_segs)
		p->fast_write = 0;   /* nowhere to keep write data: write-through */
	if (!p->queue_depth)
		p->queue_depth = 1;
	if (p->bcw && (!(p->bcw_wf > 0) || !(p->bcw_wm > 0) || p->bcw_lf_ms < 0 ||
		       p->bcw_lm_ms < 0 || p->bcw_ls_ms < 0)) {
		snprintf(err, errlen, "%s: BCW needs W_f, W_m > 0 and non-negative L_f, L_m, L_s",
			 p->name);
		return -EINVAL;
	}
	p->media_rate = p->zone[0].bpt * (double)SIM_SECTOR / (60e9 / p->rpm);
	return 0;
}

double sim_hdd_seek_ms(const struct sim_hdd_params *p, uint32_t dist)
{
	unsigned lo, hi;

	if (dist == 0)
		return 0;
	if (p->seek_kind == SIM_SEEK_CURVE) {
		if (p->have_first10 && dist <= 10)
			return p->first10_ms[dist - 1];
		if (dist == 1 && p->rw_single)
			return p->seek_one_ms;
		if (dist < p->rw_boundary)
			return p->rw_a + p->rw_b * sqrt((double)dist);
		return p->rw_c + p->rw_e * (double)dist;
	}
	/* Measured table: exact point, linear interpolation between points,
	 * linear extrapolation beyond the ends (as DiskSim's "extracted"). */
	if (p->nseek == 1)
		return p->seek_ms[0];
	lo = 0;
	hi = p->nseek - 1;
	if (dist <= p->seek_dist[0]) {
		hi = 1;
	} else if (dist >= p->seek_dist[hi]) {
		lo = hi - 1;
	} else {
		while (hi - lo > 1) {
			unsigned mid = (lo + hi) / 2;

			if (p->seek_dist[mid] <= dist)
				lo = mid;
			else
				hi = mid;
		}
	}
	{
		double d1 = p->seek_dist[lo], d2 = p->seek_dist[hi];
		double t = p->seek_ms[lo] + ((double)dist - d1) * (p->seek_ms[hi] - p->seek_ms[lo]) / (d2 - d1);

		return t > 0 ? t : 0;
	}
}

/* ---- the drive ---- */

struct sim_hdd *sim_hdd_create(const struct sim_hdd_params *p)
{
	struct sim_hdd *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->p = *p;
	if (p->nsegs) {
		h->seg = calloc(p->nsegs, sizeof(*h->seg));
		if (!h->seg) {
			free(h);
			return NULL;
		}
	}
	h->prev_read_last = UINT64_MAX;
	h->rot_ns = 60e9 / p->rpm;
	for (unsigned i = 0; i < p->nzones; i++)
		h->sect_ns[i] = h->rot_ns / p->zone[i].bpt;
	h->xfer_ns = p->xfer_ms * 1e6;
	return h;
}

void sim_hdd_destroy(struct sim_hdd *h)
{
	if (!h)
		return;
	free(h->seg);
	free(h);
}

const struct sim_hdd_params *sim_hdd_params(const struct sim_hdd *h)
{
	return &h->p;
}

void sim_hdd_set_arm_observer(struct sim_hdd *h, sim_hdd_arm_fn fn, void *ctx)
{
	h->arm_fn = fn;
	h->arm_ctx = ctx;
}

const struct sim_hdd_stats *sim_hdd_stats(const struct sim_hdd *h)
{
	return &h->st;
}

/* The arm goes to cyl at time t (counting the movement). */
static void arm_to(struct sim_hdd *h, uint32_t cyl, double t)
{
	if (cyl != h->cyl) {
		h->st.arm_moves++;
		h->st.tmd += cyl > h->cyl ? cyl - h->cyl : h->cyl - cyl;
		h->cyl = cyl;
		if (h->arm_fn)
			h->arm_fn(h->arm_ctx, (uint64_t)t, cyl);
	}
}

/* Time from t until the start of sector b passes under the head. */
static double rot_wait(const struct sim_hdd *h, const struct sim_hdd_pbn *b, double t)
{
	double turns = t / h->rot_ns;
	double head = turns - floor(turns);
	double w = sector_angle(&h->p, b) - head;

	if (w < 0)
		w += 1;
	if (w >= 1)
		w -= 1;
	return w * h->rot_ns;
}

/*
 * Moves the head to lbn starting at time t (seek, or head switch, plus
 * write settling), then waits for the sector, but not before `earliest`.
 * Returns the time the transfer of lbn can begin.
 */
static double position(struct sim_hdd *h, uint64_t lbn, double t, bool write, double earliest)
{
	struct sim_hdd_pbn b;
	double move = 0, start;

	map_run(&h->p, lbn, &b, NULL);
	if (b.cyl != h->cyl) {
		uint32_t d = b.cyl > h->cyl ? b.cyl - h->cyl : h->cyl - b.cyl;

		move = sim_hdd_seek_ms(&h->p, d) * 1e6;
		if (b.head != h->head && move < h->p.head_switch_ms * 1e6)
			move = h->p.head_switch_ms * 1e6;
	} else if (b.head != h->head) {
		move = h->p.head_switch_ms * 1e6;
	}
	if (write && (move > 0 || b.head != h->head))
		move += h->p.write_settle_ms * 1e6;
	arm_to(h, b.cyl, t);
	h->head = b.head;
	start = t + move;
	if (start < earliest)
		start = earliest;
	return start + rot_wait(h, &b, start);
}

/*
 * Transfers sectors sequentially: s says the head is at the start of
 * s->next at s->t.  Stops before `limit` or at the last sector boundary not
 * after t_stop, whichever comes first; track and cylinder switches (head
 * switch or one-cylinder seek, then the skewed first sector) are taken when
 * due.  With commit, the arm position and movements are recorded.
 */
static void stream_advance(struct sim_hdd *h, struct stream *s, uint64_t limit, double t_stop,
			   bool commit)
{
	while (s->next < limit) {
		struct sim_hdd_pbn b;
		uint64_t run, k;
		double st;

		map_run(&h->p, s->next, &b, &run);
		if (s->pending) {
			/* Track end (or a slip, spare or defect): head switch or
			 * seek to the next block's track, then wait for its
			 * (skewed) sector. */
			struct sim_hdd_pbn pb;
			double sw;

			if (s->t > t_stop)
				return;
			map_run(&h->p, s->next - 1, &pb, NULL);
			if (b.cyl != pb.cyl)
				sw = sim_hdd_seek_ms(&h->p, b.cyl > pb.cyl ? b.cyl - pb.cyl
									: pb.cyl - b.cyl) * 1e6;
			else if (b.head != pb.head)
				sw = h->p.head_switch_ms * 1e6;
			else
				sw = 0;   /* a slipped or remapped sector on the same track */
			if (commit) {
				arm_to(h, b.cyl, s->t);
				h->head = b.head;
			}
			s->t += sw;
			s->t += rot_wait(h, &b, s->t);
			s->pending = false;
		}
		st = h->sect_ns[b.zone];
		k = run < limit - s->next ? run : limit - s->next;
		if (s->t + (double)k * st > t_stop) {
			double fit = floor((t_stop - s->t) / st);

			if (fit > 0) {
				s->next += (uint64_t)fit;
				s->t += fit * st;
			}
			return;
		}
		s->next += k;
		s->t += (double)k * st;
		if (k == run && s->next < h->p.blocks)
			s->pending = true;
	}
}

/* Brings the read-ahead up to time t; stops it if stop (the mechanism is
 * needed elsewhere). */
static void prefetch_to(struct sim_hdd *h, double t, bool stop)
{
	struct seg *sg;
	uint64_t before;

	if (!h->pf_active)
		return;
	if (h->pf.t < t) {
		before = h->pf.next;
		stream_advance(h, &h->pf, h->pf_limit, t, true);
		h->st.readahead_blocks += h->pf.next - before;
		sg = &h->seg[h->pf_seg];
		if (h->pf.next > sg->end)
			sg->end = h->pf.next;
	}
	if (stop || h->pf.next >= h->pf_limit) {
		h->pf_active = false;
		if (h->pf.t > h->mech_free)
			h->mech_free = h->pf.t < t ? h->pf.t : t;
	}
}

/* Segment fully holding [lbn, lbn+n) and usable at t, or -1. */
static int find_hit(const struct sim_hdd *h, uint64_t lbn, uint64_t n, double t)
{
	for (unsigned i = 0; i < h->p.nsegs; i++) {
		const struct seg *s = &h->seg[i];

		if (!s->used || lbn < s->start || lbn + n > s->end)
			continue;
		if (s->clean_at > t && !h->p.read_hits_on_write_data)
			continue;
		return (int)i;
	}
	return -1;
}

/* Drops cached copies overlapping a write (other than keep). */
static void invalidate(struct sim_hdd *h, uint64_t lbn, uint64_t n, int keep)
{
	for (unsigned i = 0; i < h->p.nsegs; i++) {
		struct seg *s = &h->seg[i];

		if ((int)i == keep || !s->used || lbn + n <= s->start || lbn >= s->end)
			continue;
		if (h->pf_active && h->pf_seg == i)
			h->pf_active = false;
		s->used = false;
	}
}

/* Least recently used segment with no unwritten data at t (-1 if none). */
static int pick_victim(const struct sim_hdd *h, double t)
{
	int best = -1;

	for (unsigned i = 0; i < h->p.nsegs; i++) {
		const struct seg *s = &h->seg[i];

		if (s->used && s->clean_at > t)
			continue;
		if (!s->used)
			return (int)i;
		if (best < 0 || s->stamp < h->seg[best].stamp)
			best = (int)i;
	}
	return best;
}

static int dirty_segments(const struct sim_hdd *h, double t, double *ret_first_clean)
{
	int n = 0;

	*ret_first_clean = INFINITY;
	for (unsigned i = 0; i < h->p.nsegs; i++) {
		const struct seg *s = &h->seg[i];

		if (s->used && s->clean_at > t) {
			n++;
			if (s->clean_at < *ret_first_clean)
				*ret_first_clean = s->clean_at;
		}
	}
	return n;
}

static void seg_fill(struct sim_hdd *h, int i, uint64_t lbn, uint64_t n, double clean_at)
{
	struct seg *s = &h->seg[i];

	if (h->pf_active && h->pf_seg == (unsigned)i)
		h->pf_active = false;
	s->used = true;
	s->start = lbn;
	s->end = lbn + n;
	s->clean_at = clean_at;
	s->stamp = ++h->stamp;
}

/* First block after the blocks of lbn's track that follow lbn. */
static uint64_t track_end(const struct sim_hdd *h, uint64_t lbn)
{
	struct sim_hdd_pbn b;
	uint64_t run = 1;

	map_run(&h->p, lbn, &b, &run);
	/* A run stops early at a slip or defect: go on while the track is the same. */
	for (uint64_t next = lbn + run; next < h->p.blocks; next += run) {
		struct sim_hdd_pbn nb;

		map_run(&h->p, next, &nb, &run);
		if (nb.cyl != b.cyl || nb.head != b.head)
			return next;
	}
	return h->p.blocks;
}

/*
 * Starts read-ahead into segment i from where the media stream s stands,
 * just after a read of [first, s->next), as far as the drive's
 * continuous-read scheme, its maximum read-ahead and the segment allow.
 */
static void prefetch_start(struct sim_hdd *h, int i, const struct stream *s, uint64_t first)
{
	uint64_t start = h->seg[i].start, limit, from = s->next, last = s->next - 1;

	if (!h->p.max_readahead || from >= h->p.blocks || h->p.contread == SIM_RA_NONE)
		return;
	limit = from + h->p.max_readahead;
	if (limit > start + h->p.seg_blocks)
		limit = start + h->p.seg_blocks;
	if (limit > h->p.blocks)
		limit = h->p.blocks;
	switch (h->p.contread) {
	case SIM_RA_TRACK:
		if (limit > track_end(h, last))
			limit = track_end(h, last);
		break;
	case SIM_RA_CYLINDER: {
		struct sim_hdd_pbn a, b;
		uint64_t end = track_end(h, last);

		map_run(&h->p, last, &a, NULL);
		while (end < limit && map_run(&h->p, end, &b, NULL) && b.cyl == a.cyl)
			end = track_end(h, end);
		if (limit > end)
			limit = end;
		break;
	}
	case SIM_RA_TRACK_AHEAD: {
		/* DiskSim's code (disk_buffer_get_max_readahead): to the end of
		 * the track holding the block after the request, one track
		 * further when the segment began on an earlier track (a
		 * sequential stream: stay a track ahead of it).  When the
		 * segment cannot hold that much, only as its documentation
		 * describes the scheme: after a read of this request's first
		 * track or the one before (see docs/calibration.md). */
		struct sim_hdd_pbn b;
		uint64_t te = track_end(h, from), prev = h->prev_read_last;

		map_run(&h->p, from, &b, NULL);
		if (start + b.sector < from)
			te = track_end(h, te);
		if (te > start + h->p.seg_blocks) {
			map_run(&h->p, first, &b, NULL);
			if (prev == UINT64_MAX || prev >= first ||
			    first - prev > (uint64_t)h->p.zone[b.zone].bpt + b.sector)
				return;
		}
		if (limit > te)
			limit = te;
		break;
	}
	default:
		break;
	}
	if (limit <= from)
		return;
	h->pf_active = true;
	h->pf_seg = (unsigned)i;
	h->pf_limit = limit;
	h->pf = *s;
}

static double ovh(const struct sim_hdd *h, bool write, bool miss)
{
	return h->p.ovh_ms[(write ? 4 : 0) + (miss ? 2 : 0) + (h->last_write ? 1 : 0)] * 1e6;
}

/* BCW: drains the buffer at the media rate up to t. */
static void bcw_drain(struct sim_hdd *h, double t)
{
	if (t <= h->bcw_t)
		return;
	h->bcw_dirty -= (t - h->bcw_t) * h->p.media_rate;
	h->bcw_t = t;
	if (h->bcw_dirty <= 0) {
		/* The buffer emptied: the next write starts a new sequence. */
		h->bcw_dirty = 0;
		h->bcw_state = 0;
		h->bcw_adw = 0;
	}
}

static double bcw_write(struct sim_hdd *h, uint64_t lbn, uint64_t n, double t)
{
	double s = (double)n * SIM_SECTOR, lat;
	struct sim_hdd_pbn b;

	prefetch_to(h, t, true);
	bcw_drain(h, t);
	if (h->bcw_state == 0 && h->bcw_adw + s <= h->p.bcw_wf) {
		lat = h->p.bcw_lf_ms * 1e6;
		h->bcw_adw += s;
		h->st.bcw_fast++;
	} else if (h->bcw_state == 1 && h->bcw_adw + s <= h->p.bcw_wm) {
		lat = h->p.bcw_lm_ms * 1e6;
		h->bcw_adw += s;
		h->st.bcw_mid++;
	} else {
		/* The buffer is full: this write waits for a flush (Slow) and the
		 * drive continues in the Mid state. */
		lat = h->p.bcw_ls_ms * 1e6;
		h->bcw_state = 1;
		h->bcw_adw = 0;
		h->st.bcw_slow++;
		h->bcw_dirty -= lat * h->p.media_rate;
		if (h->bcw_dirty < 0)
			h->bcw_dirty = 0;
	}
	h->bcw_dirty += s;
	h->bcw_t = t + lat;
	map_run(&h->p, lbn, &b, NULL);
	arm_to(h, b.cyl, t);
	h->head = b.head;
	h->st.writes_buffered++;
	invalidate(h, lbn, n, -1);
	return t + lat;
}

/* BCW: time at which the buffer has drained, from t. */
static double bcw_empty_at(const struct sim_hdd *h, double t)
{
	double d = h->bcw_dirty - (t > h->bcw_t ? (t - h->bcw_t) * h->p.media_rate : 0);

	return d > 0 ? t + d / h->p.media_rate : t;
}

/* BCW: a command that needs the media first waits, from t, for every
 * buffered write to reach it; returns that time, with the buffer empty and
 * the next write starting a new sequence. */
static double bcw_flush(struct sim_hdd *h, double t)
{
	t = bcw_empty_at(h, t);
	h->bcw_dirty = 0;
	h->bcw_state = 0;
	h->bcw_adw = 0;
	h->bcw_t = t;
	return t;
}

static double serve_read(struct sim_hdd *h, uint64_t lbn, uint64_t n, double t)
{
	double done, t_on, start, reconnect;
	struct stream s;
	int i;

	prefetch_to(h, t, false);
	i = find_hit(h, lbn, n, t);
	if (i >= 0) {
		struct seg *sg = &h->seg[i];

		h->st.read_hits++;
		sg->stamp = ++h->stamp;
		done = t + ovh(h, false, false) + h->p.data_prep_ms * 1e6 + (double)n * h->xfer_ns +
		       h->p.read_complete_ms * 1e6;
		if (h->p.readahead_on_idle_hit && !h->pf_active && lbn + n == sg->end &&
		    sg->clean_at <= t && sg->end < h->p.blocks) {
			/* Restart read-ahead from the segment end, keeping the
			 * segment within its size. */
			struct stream f = {
				.next = sg->end,
				.t = position(h, sg->end, done > h->mech_free ? done : h->mech_free,
					      false, 0),
			};

			if (sg->end - sg->start + h->p.max_readahead > h->p.seg_blocks)
				sg->start = sg->end + h->p.max_readahead > h->p.seg_blocks
						    ? sg->end + h->p.max_readahead - h->p.seg_blocks
						    : 0;
			if (sg->start > lbn)
				sg->start = lbn;
			prefetch_start(h, i, &f, lbn);
		}
		return done;
	}
	if (h->pf_active && lbn >= h->seg[h->pf_seg].start && lbn + n <= h->pf_limit) {
		/* The read-ahead in progress will bring the data: wait for it. */
		struct stream f = h->pf;
		double xfer_done = t + ovh(h, false, false) + (double)n * h->xfer_ns;

		stream_advance(h, &f, lbn + n, INFINITY, false);
		done = f.t + h->xfer_ns > xfer_done ? f.t + h->xfer_ns : xfer_done;
		h->st.read_partial_hits++;
		h->seg[h->pf_seg].stamp = ++h->stamp;
		return done + h->p.read_complete_ms * 1e6;
	}

	h->st.read_misses++;
	prefetch_to(h, t, true);
	/* Command, then the drive leaves the bus during the seek. */
	start = t + ovh(h, false, true) + h->p.read_disconnect_ms[h->last_write] * 1e6;
	if (start < h->mech_free)
		start = h->mech_free;
	if (h->p.bcw) /* buffered writes reach the media before the read */
		start = bcw_flush(h, start);
	t_on = position(h, lbn, start, false, 0);
	/* It reconnects when the high water mark of the data is buffered,
	 * then sends at bus speed while the rest is read. */
	{
		uint64_t k = (uint64_t)ceil(h->p.read_hwm * (double)(h->p.hwm_by_request || !h->p.nsegs
								      ? n : h->p.seg_blocks));

		if (k < 1)
			k = 1;
		if (k > n)
			k = n;
		s = (struct stream){ .next = lbn, .t = t_on };
		stream_advance(h, &s, lbn + k, INFINITY, true);
		reconnect = s.t + h->p.reselect_ms * 1e6;
	}
	stream_advance(h, &s, lbn + n, INFINITY, true);
	h->st.mech_ms += (s.t - start) / 1e6;
	h->mech_free = s.t;
	done = s.t > reconnect + (double)n * h->xfer_ns ? s.t : reconnect + (double)n * h->xfer_ns;
	done += h->p.read_complete_ms * 1e6;
	if (h->p.nsegs) {
		i = pick_victim(h, t);
		if (i >= 0) {
			seg_fill(h, i, lbn, n, 0);
			prefetch_start(h, i, &s, lbn);
		}
	}
	return done;
}

/*
 * Writes [lbn, lbn+n) to the media once the mechanism is free after t_cmd
 * and the first sector's data is in the buffer; keeps a clean copy in a
 * cache segment.  Returns when the last sector is written.
 */
static double media_write(struct sim_hdd *h, uint64_t lbn, uint64_t n, double t, double t_cmd)
{
	double start = t_cmd > h->mech_free ? t_cmd : h->mech_free;
	struct stream s;
	int i;

	prefetch_to(h, start, true);
	invalidate(h, lbn, n, -1);
	s = (struct stream){ .next = lbn, .t = position(h, lbn, start, true, t_cmd + h->xfer_ns) };
	stream_advance(h, &s, lbn + n, INFINITY, true);
	h->st.mech_ms += (s.t - start) / 1e6;
	h->mech_free = s.t;
	if (h->p.nsegs) {
		i = pick_victim(h, t);
		if (i >= 0)
			seg_fill(h, i, lbn, n, s.t);
	}
	return s.t;
}

static double serve_write(struct sim_hdd *h, uint64_t lbn, uint64_t n, double t)
{
	double t_cmd, first_clean, end, xfer_end;

	if (h->p.bcw)
		return bcw_write(h, lbn, n, t);
	if (h->p.fast_write && h->p.nsegs) {
		/* Write-back: wait for a free write segment, take the data,
		 * acknowledge, destage in the background. */
		while (dirty_segments(h, t, &first_clean) >= (int)h->p.max_write_segs)
			t = first_clean;
		t_cmd = t + ovh(h, true, false);
		media_write(h, lbn, n, t, t_cmd);
		h->st.writes_buffered++;
		h->st.destages++;
		return t_cmd + (double)n * h->xfer_ns + h->p.write_complete_ms * 1e6;
	}
	/* Write-through: the data reaches the media before completion. */
	h->st.writes_through++;
	t_cmd = t + ovh(h, true, true);
	end = media_write(h, lbn, n, t, t_cmd);
	xfer_end = t_cmd + (double)n * h->xfer_ns;
	return (end > xfer_end ? end : xfer_end) + h->p.write_complete_ms * 1e6;
}

uint64_t sim_hdd_serve(struct sim_hdd *h, int op, uint64_t lbn, uint32_t nblocks, uint64_t now_ns)
{
	double t = (double)now_ns, done;

	if (t < h->fg_free)
		t = h->fg_free;
	if (op != POLICY_OP_FLUSH) {
		if (lbn >= h->p.blocks)
			lbn = h->p.blocks - 1;
		if (nblocks == 0)
			nblocks = 1;
		if (lbn + nblocks > h->p.blocks)
			nblocks = (uint32_t)(h->p.blocks - lbn);
	}
	switch (op) {
	case POLICY_OP_READ:
		done = serve_read(h, lbn, nblocks, t);
		h->last_write = false;
		h->prev_read_last = lbn + nblocks - 1;
		break;
	case POLICY_OP_WRITE:
		done = serve_write(h, lbn, nblocks, t);
		h->last_write = true;
		break;
	default:
		/* Flush: every buffered write on the media. */
		done = t > h->mech_free ? t : h->mech_free;
		if (h->p.bcw)
			done = bcw_flush(h, done);
		done += h->p.write_complete_ms * 1e6;
		break;
	}
	if (done < t)
		done = t;
	h->fg_free = done;
	return (uint64_t)llround(done);
}
