/* SPDX-License-Identifier: MIT */
/*
 * The fd tagging table on its own: set, get, replace, clear, identity
 * checks against reused descriptor numbers, the bounds, and readers racing
 * writers.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tag.h"

static struct tag_info info;

static struct iosig_sig sig_of(uint64_t spi)
{
	struct iosig_sig s;

	memset(&s, 0, sizeof(s));
	s.set = IOSIG_HAS(IOSIG_P_SIZE_PER_IO) | IOSIG_HAS(IOSIG_P_RANDOM);
	s.size_per_io = spi;
	return s;
}

static void test_set_get_clear(void **state)
{
	struct iosig_sig s = sig_of(4096);
	int fd = open("/dev/null", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_false(tag_lookup(fd));
	assert_int_equal(tag_get(fd, 0, &info), -ENOENT);
	assert_int_equal(tag_set(fd, &s, NULL, "/orig/path", "/data/L-1-path"), 0);
	assert_true(tag_lookup(fd));
	assert_int_equal(tag_get(fd, TAG_VERIFY, &info), 0);
	assert_int_equal(info.sig.size_per_io, 4096);
	assert_true(info.sig.set & IOSIG_HAS(IOSIG_P_RANDOM));
	assert_string_equal(info.orig_path, "/orig/path");
	assert_string_equal(info.data_path, "/data/L-1-path");
	assert_true(info.redirected);
	assert_null(info.mount);
	/* Replacing a tag. */
	s = sig_of(1 << 20);
	assert_int_equal(tag_set(fd, &s, NULL, "/other", NULL), 0);
	assert_int_equal(tag_get(fd, 0, &info), 0);
	assert_int_equal(info.sig.size_per_io, 1 << 20);
	assert_string_equal(info.orig_path, "/other");
	assert_string_equal(info.data_path, "");
	assert_false(info.redirected);
	tag_clear(fd);
	assert_false(tag_lookup(fd));
	tag_clear(fd);   /* twice is fine */
	close(fd);
}

/* A number closed and reused for another file: TAG_VERIFY drops it. */
static void test_stale(void **state)
{
	struct iosig_sig s = sig_of(512);
	int fd = open("/dev/null", O_RDONLY), fd2;

	(void)state;
	assert_int_equal(tag_set(fd, &s, NULL, "/x", NULL), 0);
	close(fd);
	fd2 = open("/proc/self/stat", O_RDONLY);
	assert_int_equal(fd2, fd);
	/* Without verification the table cannot know. */
	assert_int_equal(tag_get(fd2, 0, &info), 0);
	assert_int_equal(tag_get(fd2, TAG_VERIFY, &info), -ESTALE);
	assert_false(tag_lookup(fd2));
	close(fd2);
	/* A closed descriptor cannot be tagged. */
	assert_int_equal(tag_set(fd2, &s, NULL, "/x", NULL), -EBADF);
}

static void test_bounds(void **state)
{
	struct iosig_sig s = sig_of(1);
	char longpath[PATH_MAX + 10];
	int fd = open("/dev/null", O_RDONLY);

	(void)state;
	assert_int_equal(tag_set(-1, &s, NULL, "/x", NULL), -EBADF);
	assert_int_equal(tag_set(TAG_MAX_FD, &s, NULL, "/x", NULL), -EBADF);
	assert_false(tag_lookup(-7));
	assert_false(tag_lookup(TAG_MAX_FD));
	tag_clear(-1);
	tag_clear(TAG_MAX_FD + 1);
	/* Paths longer than the info buffers are cut, never overflowed. */
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(tag_set(fd, &s, NULL, longpath, longpath), 0);
	assert_int_equal(tag_get(fd, 0, &info), 0);
	assert_int_equal(strlen(info.orig_path), PATH_MAX - 1);
	assert_int_equal(strlen(info.data_path), PATH_MAX - 1);
	/* A high descriptor number lands in another chunk. */
	{
		int hi = fcntl(fd, F_DUPFD, 5000);

		if (hi >= 0) {
			assert_false(tag_lookup(hi));
			assert_int_equal(tag_set(hi, &s, NULL, "/hi", NULL), 0);
			assert_true(tag_lookup(hi));
			assert_int_equal(tag_get(hi, TAG_VERIFY, &info), 0);
			assert_string_equal(info.orig_path, "/hi");
			close(hi);
		}
	}
	tag_clear_all();
	assert_false(tag_lookup(fd));
	close(fd);
}

/* Readers copying tags while writers replace and clear them. */
static int race_fds[8];
static volatile int race_stop;

static void *race_writer(void *arg)
{
	long n = 0;

	(void)arg;
	while (!race_stop) {
		struct iosig_sig s = sig_of((uint64_t)(n % 7 + 1) * 512);
		int fd = race_fds[n % 8];

		if (n % 3)
			tag_set(fd, &s, NULL, "/race/orig", n % 2 ? "/race/data" : NULL);
		else
			tag_clear(fd);
		n++;
	}
	return NULL;
}

static void *race_reader(void *arg)
{
	struct tag_info *mine = calloc(1, sizeof(*mine));
	long bad = 0;

	(void)arg;
	for (int i = 0; i < 200000 && mine; i++) {
		int fd = race_fds[i % 8];

		if (tag_get(fd, 0, mine) == 0) {
			/* A record is always whole: one writer's, never a mix. */
			if (strcmp(mine->orig_path, "/race/orig") ||
			    (mine->redirected != !strcmp(mine->data_path, "/race/data")) ||
			    mine->sig.size_per_io % 512 || !mine->sig.size_per_io)
				bad++;
		}
	}
	free(mine);
	return (void *)bad;
}

static void test_race(void **state)
{
	pthread_t w[2], r[2];
	long bad = 0;

	(void)state;
	for (int i = 0; i < 8; i++)
		race_fds[i] = open("/dev/null", O_RDONLY);
	race_stop = 0;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&w[i], NULL, race_writer, NULL), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&r[i], NULL, race_reader, NULL), 0);
	for (int i = 0; i < 2; i++) {
		void *ret;

		pthread_join(r[i], &ret);
		bad += (long)ret;
	}
	race_stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	assert_int_equal(bad, 0);
	tag_clear_all();
	for (int i = 0; i < 8; i++)
		close(race_fds[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_get_clear),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_race),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
