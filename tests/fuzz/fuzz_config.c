/* SPDX-License-Identifier: MIT */
/*
 * fuzz_config.c - libFuzzer target for the catalog's YAML parsers: the
 * configuration file and the probe cache.
 *
 * The input is loaded as a configuration (from a buffer of exactly its size,
 * so ASan sees any read past the end) and, when it loads, built into a
 * catalog without discovery, every mount of which is then queried; the same
 * bytes are loaded as a probe cache.  Invariants checked:
 *  - a refused input always comes with a message, and its position (if
 *    any) lies within the input;
 *  - an accepted config builds or fails with a message; every mount of the
 *    catalog has a path, is found by iosig_catalog_find() at its own path,
 *    has sources in range, tolerates fewer failures than it has disks, and
 *    holds finite, non-negative numbers.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "fuzz_check.h"

/* YAML breaks lines at LF, CR, CRLF and the Unicode line separators, so a
 * position is only bounded by the size of the input. */
static void check_error(const struct iosig_error *err, const char *buf, size_t size)
{
	(void)buf;
	CHECK(err->msg[0] != '\0');
	CHECK(err->line >= 0 && (size_t)err->line <= size + 1);
	CHECK(err->column >= 0 && (size_t)err->column <= size + 1);
}

static bool finite_nonneg(double v)
{
	return isfinite(v) && v >= 0;
}

static void check_mount(const struct iosig_catalog *cat, const struct iosig_mount *m)
{
	const struct iosig_mount *found;

	CHECK(m->path && m->path[0] == '/');
	CHECK(m->fstype && m->source);
	for (unsigned f = 0; f < IOSIG_F_COUNT; f++)
		CHECK(m->src[f] <= IOSIG_SRC_CONFIG);
	found = iosig_catalog_find(cat, m->path);
	CHECK(found);
	CHECK(!strcmp(found->path, m->path));
	if (m->ineligible)
		return;
	CHECK(m->cls < IOSIG_CLASS_COUNT);
	CHECK(m->layout.disks >= 1 && m->layout.tolerated < m->layout.disks);
	CHECK(m->free <= m->capacity);
	CHECK(m->ecc < m->sector_bits);
	CHECK(finite_nonneg(m->seq_read_bw) && m->seq_read_bw > 0);
	CHECK(finite_nonneg(m->seq_write_bw) && m->seq_write_bw > 0);
	CHECK(finite_nonneg(m->rand_read_bw) && finite_nonneg(m->rand_write_bw));
	CHECK(finite_nonneg(m->latency) && finite_nonneg(m->seek));
	CHECK(finite_nonneg(m->iops) && m->iops > 0);
	CHECK(finite_nonneg(m->mttf) && m->mttf > 0);
	CHECK(finite_nonneg(m->mttr) && m->mttr > 0);
	CHECK(m->ber >= 0 && m->ber <= 1);
	CHECK(!m->data_dir || m->data_dir[0] == '/');
	(void)iosig_mount_mttdl(m, 1e9);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	struct iosig_catalog_opts opts = { .flags = IOSIG_CATALOG_NO_DISCOVERY };
	struct cat_config *cfg = NULL;
	struct cat_probe_cache *pc = NULL;
	struct iosig_error err;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	memset(&err, 0, sizeof(err));
	if (cat_config_load_buffer("fuzz.yaml", buf, size, &cfg, &err) == 0) {
		struct iosig_catalog *cat = NULL;

		CHECK(cfg);
		memset(&err, 0, sizeof(err));
		if (cat_catalog_build(&opts, cfg, &cat, &err) == 0) {
			for (size_t i = 0; i < iosig_catalog_size(cat); i++)
				check_mount(cat, iosig_catalog_mount(cat, i));
			CHECK(!iosig_catalog_mount(cat, iosig_catalog_size(cat)));
			iosig_catalog_free(cat);
		} else {
			CHECK(!cat);
			check_error(&err, buf, size);
		}
		cat_config_free(cfg);
	} else {
		CHECK(!cfg);
		check_error(&err, buf, size);
	}
	memset(&err, 0, sizeof(err));
	if (cat_probe_cache_load_buffer("fuzz.yaml", buf, size, &pc, &err) == 0) {
		for (size_t i = 0; i < pc->n; i++) {
			CHECK(pc->e[i].path[0] == '/');
			CHECK(pc->e[i].v.fstype && pc->e[i].v.source);
			CHECK(cat_probe_cache_find(pc, pc->e[i].path) == &pc->e[i]);
		}
		cat_probe_cache_free(pc);
	} else {
		CHECK(!pc);
		check_error(&err, buf, size);
	}
	free(buf);
	return 0;
}
