/* SPDX-License-Identifier: MIT */
/*
 * The shared ring (iosigd/proto/ring.c): geometry, the producer's entry and
 * data allocation with wrap-around and in-order reclaim of out-of-order
 * completions, entry validation, the need_wakeup doorbell and the futex
 * wait across threads and across processes (a memfd mapped twice).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ring.h"

#define N 8
#define D (64u << 10)

struct fixture {
	void *mem;
	uint64_t size;
	struct iosd_ring r;
	struct iosd_prod p;
	uint64_t slot_end[N];
	uint8_t hold[N];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->size = iosd_ring_bytes(N, D);
	f->mem = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(f->mem != MAP_FAILED);
	iosd_ring_init(&f->r, f->mem, N, D);
	iosd_prod_init(&f->p, &f->r, f->slot_end, f->hold);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	munmap(f->mem, f->size);
	free(f);
	return 0;
}

static void test_geometry(void **state)
{
	assert_true(iosd_ring_geometry_ok(8, 64 << 10));
	assert_false(iosd_ring_geometry_ok(4, 64 << 10));
	assert_false(iosd_ring_geometry_ok(12, 64 << 10));
	assert_false(iosd_ring_geometry_ok(1u << 17, 64 << 10));
	assert_false(iosd_ring_geometry_ok(8, 32 << 10));
	assert_false(iosd_ring_geometry_ok(8, 3 << 20));
	assert_false(iosd_ring_geometry_ok(8, 2ull << 30));
	assert_int_equal(iosd_ring_bytes(7, 64 << 10), 0);
	/* Header + 8 entries fit in a page; data starts on the next page. */
	assert_int_equal(iosd_ring_bytes(8, 64 << 10), 4096 + (64 << 10));
	assert_int_equal(iosd_ring_bytes(1024, 1 << 20), 69632 + (1 << 20));
	assert_int_equal(iosd_ring_max_io(64 << 10), 16 << 10);
	assert_int_equal(iosd_ring_max_io(64 << 20), 1 << 20);
}

static void test_view(void **state)
{
	struct fixture *f = *state;
	struct iosd_ring v;

	assert_int_equal(iosd_ring_view(&v, f->mem, f->size, N, D), 0);
	assert_ptr_equal(v.entries, f->r.entries);
	assert_ptr_equal(v.data, f->r.data);
	assert_int_equal(iosd_ring_view(&v, f->mem, f->size - 1, N, D), -EINVAL);
	assert_int_equal(iosd_ring_view(&v, f->mem, f->size, N * 128, D), -EINVAL);
	assert_int_equal(iosd_ring_view(&v, f->mem, f->size, 6, D), -EINVAL);
	assert_int_equal(f->r.hdr->magic, IOSD_RING_MAGIC);
	assert_int_equal(f->r.hdr->total, f->size);
}

/* Publishes an op with len data bytes; returns the position. */
static uint32_t put(struct fixture *f, uint16_t op, uint64_t len, uint64_t *ret_off)
{
	struct iosd_entry *e;
	uint64_t off;
	bool kick;

	assert_int_equal(iosd_prod_reserve(&f->p, len, &e, &off), 0);
	e->op = op;
	e->length = len;
	e->offset = 0;
	e->data_off = off;
	e->handle = 1;
	e->flags = 0;
	e->aux = 0;
	if (ret_off)
		*ret_off = off;
	return iosd_prod_publish(&f->p, &kick);
}

static void count_errors(void *ctx, const struct iosd_entry *e)
{
	*(int *)ctx += e->result < 0;
}

static void test_entries_and_reclaim(void **state)
{
	struct fixture *f = *state;
	int errors = 0;
	struct iosd_entry *e;
	uint32_t pos[N];
	uint64_t off;

	for (unsigned i = 0; i < N; i++)
		pos[i] = put(f, IOSD_OP_BARRIER, 0, NULL);
	assert_int_equal(iosd_prod_outstanding(&f->p), N);
	/* Full: no entry left. */
	assert_int_equal(iosd_prod_reserve(&f->p, 0, &e, &off), -EAGAIN);
	assert_int_equal(iosd_ring_pending(&f->r, 0), N);
	/* Out of order completion: nothing reclaimable until the first is done. */
	iosd_ring_complete(&f->r, pos[2], 0, 0);
	iosd_ring_complete(&f->r, pos[1], 0, 0);
	assert_int_equal(iosd_prod_reclaim(&f->p, NULL, NULL), 0);
	iosd_ring_complete(&f->r, pos[0], 0, 0);
	assert_int_equal(iosd_prod_reclaim(&f->p, NULL, NULL), 3);
	assert_int_equal(iosd_entry_state(iosd_ring_entry(&f->r, pos[0])), IOSD_ST_FREE);
	/* A held entry (a waiter has not read it yet) stops reclaim; the
	 * callback sees each reclaimed entry. */
	iosd_ring_complete(&f->r, pos[3], 0, 0);
	iosd_ring_complete(&f->r, pos[4], -5, 0);
	f->hold[pos[4] & (N - 1)] = 1;
	assert_int_equal(iosd_prod_reclaim(&f->p, count_errors, &errors), 1);
	assert_int_equal(errors, 0);
	f->hold[pos[4] & (N - 1)] = 0;
	assert_int_equal(iosd_prod_reclaim(&f->p, count_errors, &errors), 1);
	assert_int_equal(errors, 1);
	assert_int_equal(iosd_prod_outstanding(&f->p), 3);
	assert_int_equal(iosd_prod_reserve(&f->p, 0, &e, &off), 0);
	assert_ptr_equal(e, iosd_ring_entry(&f->r, pos[0]));
}

static void test_data_wrap(void **state)
{
	struct fixture *f = *state;
	uint64_t max = iosd_ring_max_io(D), off[6];
	struct iosd_entry *e;
	uint32_t pos[6];

	assert_int_equal(iosd_prod_reserve(&f->p, max + 1, &e, &off[0]), -EINVAL);
	/* 16 KiB entries: four fill the 64 KiB area. */
	for (unsigned i = 0; i < 4; i++) {
		pos[i] = put(f, IOSD_OP_WRITE, max, &off[i]);
		assert_int_equal(off[i], i * max);
	}
	assert_int_equal(iosd_prod_reserve(&f->p, 1, &e, &off[4]), -EAGAIN);
	iosd_ring_complete(&f->r, pos[0], (int64_t)max, 0);
	assert_int_equal(iosd_prod_reclaim(&f->p, NULL, NULL), 1);
	/* 100 bytes take 128 (alignment), at the start again. */
	pos[4] = put(f, IOSD_OP_WRITE, 100, &off[4]);
	assert_int_equal(off[4], 0);
	/* 16 KiB do not fit in the 16 KiB - 128 left before the end: they must
	 * wait for the second slot, then start at 128. */
	assert_int_equal(iosd_prod_reserve(&f->p, max, &e, &off[5]), -EAGAIN);
	iosd_ring_complete(&f->r, pos[1], (int64_t)max, 0);
	assert_int_equal(iosd_prod_reclaim(&f->p, NULL, NULL), 1);
	pos[5] = put(f, IOSD_OP_WRITE, max, &off[5]);
	assert_int_equal(off[5], 128);
	/* A write that would run past the end of the area skips to the start. */
	for (unsigned i = 2; i < 6; i++)
		iosd_ring_complete(&f->r, pos[i], 0, 0);
	assert_int_equal(iosd_prod_reclaim(&f->p, NULL, NULL), 4);
	pos[0] = put(f, IOSD_OP_WRITE, max - 64, &off[0]);
	assert_int_equal(off[0], 128 + max);
	pos[1] = put(f, IOSD_OP_WRITE, max, &off[1]);
	assert_int_equal(off[1], 128 + 2 * max - 64);
	pos[2] = put(f, IOSD_OP_WRITE, max, &off[2]);
	assert_int_equal(off[2], 0);
	for (unsigned i = 0; i < 3; i++)
		assert_true(off[i] + max <= D);
}

static void test_entry_check(void **state)
{
	struct fixture *f = *state;
	struct iosd_entry e;
	const char *why;
	uint32_t pos = put(f, IOSD_OP_WRITE, 4096, NULL);

	iosd_ring_copy(&f->r, pos, &e);
	assert_int_equal(iosd_entry_check(&f->r, &e, pos, &why), 0);
	/* Each invalid shape, from the good copy. */
#define BAD(stmt, reason)                                                       \
	do {                                                                    \
		struct iosd_entry x = e;                                        \
		why = NULL;                                                     \
		stmt;                                                           \
		assert_int_equal(iosd_entry_check(&f->r, &x, pos, &why), -EBADMSG); \
		assert_string_equal(why, reason);                               \
	} while (0)
	BAD(x.seq++, "entry position does not match its sequence number");
	BAD(x.op = 0, "unknown operation");
	BAD(x.op = IOSD_OP_MAX + 1, "unknown operation");
	BAD(x.flags = 0x80, "unknown entry flags");
	BAD(x.reserved0 = 1, "reserved entry field not zero");
	BAD(atomic_store(&x.state, IOSD_ST_DONE), "entry not in the published state");
	BAD(x.length = 0, "data length out of range");
	BAD(x.length = iosd_ring_max_io(D) + 1, "data length out of range");
	BAD(x.data_off = D - 100, "data outside the data area");
	BAD(x.data_off = UINT64_MAX - 10, "data outside the data area");
	BAD(x.offset = UINT64_MAX - 10, "file range out of bounds");
	BAD(x.offset = INT64_MAX - 100, "file range out of bounds");
	BAD((x.op = IOSD_OP_APPEND, x.offset = 5), "file range out of bounds");
	BAD(x.aux = 1, "aux set on a data operation");
	BAD((x.op = IOSD_OP_FSYNC, x.length = 0, x.offset = 1, x.data_off = 0),
	    "arguments on an operation that takes none");
	BAD((x.op = IOSD_OP_BARRIER, x.length = 0, x.data_off = 0, x.aux = 2),
	    "arguments on an operation that takes none");
	BAD((x.op = IOSD_OP_SYNC_RANGE, x.data_off = 0, x.aux = 8), "SYNC_RANGE: unknown flags");
	BAD((x.op = IOSD_OP_SYNC_RANGE, x.data_off = 4), "SYNC_RANGE: bad range");
	BAD((x.op = IOSD_OP_TRUNCATE, x.data_off = 0), "TRUNCATE: bad arguments");
	BAD((x.op = IOSD_OP_TRUNCATE, x.length = 0, x.data_off = 0, x.offset = UINT64_MAX),
	    "TRUNCATE: bad arguments");
	BAD((x.op = IOSD_OP_FALLOCATE, x.data_off = 0, x.length = 0), "FALLOCATE: bad range");
	BAD((x.op = IOSD_OP_FALLOCATE, x.data_off = 0, x.aux = 0x10000), "FALLOCATE: unknown mode");
	BAD((x.op = IOSD_OP_WRITTEN, x.data_off = 64), "WRITTEN: bad range");
	BAD((x.op = IOSD_OP_WRITTEN, x.data_off = 0, x.length = 0), "WRITTEN: bad range");
	BAD((x.op = IOSD_OP_WRITTEN, x.data_off = 0, x.length = IOSD_WRITTEN_MAX + 1),
	    "WRITTEN: bad range");
	BAD((x.op = IOSD_OP_WRITTEN, x.data_off = 0, x.offset = INT64_MAX), "WRITTEN: bad range");
	BAD((x.op = IOSD_OP_WRITTEN, x.data_off = 0, x.aux = 1), "WRITTEN: bad range");
#undef BAD
	/* Good shapes of the other ops. */
	e.data_off = 0;
	e.op = IOSD_OP_SYNC_RANGE;
	e.aux = 7;
	assert_int_equal(iosd_entry_check(&f->r, &e, pos, &why), 0);
	e.op = IOSD_OP_TRUNCATE;
	e.aux = 0;
	e.length = 0;
	e.offset = 1 << 20;
	assert_int_equal(iosd_entry_check(&f->r, &e, pos, &why), 0);
	e.op = IOSD_OP_FALLOCATE;
	e.length = 4096;
	e.aux = 3;   /* KEEP_SIZE | PUNCH_HOLE */
	assert_int_equal(iosd_entry_check(&f->r, &e, pos, &why), 0);
	/* WRITTEN names a range, larger than any entry's data may be. */
	e.op = IOSD_OP_WRITTEN;
	e.aux = 0;
	e.length = IOSD_WRITTEN_MAX;
	assert_int_equal(iosd_entry_check(&f->r, &e, pos, &why), 0);
	assert_string_equal(iosd_op_name(IOSD_OP_WRITTEN), "WRITTEN");
}

static void test_doorbell(void **state)
{
	struct fixture *f = *state;
	struct iosd_entry *e;
	uint64_t off;
	uint32_t head = 0;
	bool kick;

	/* Awake daemon: publishing asks for no kick. */
	assert_int_equal(iosd_prod_reserve(&f->p, 0, &e, &off), 0);
	e->op = IOSD_OP_BARRIER;
	iosd_prod_publish(&f->p, &kick);
	assert_false(kick);
	/* The daemon wants to sleep but entries are waiting: it must not. */
	assert_true(iosd_ring_sleep_prepare(&f->r, head));
	assert_int_equal(f->r.hdr->flags & IOSD_RING_NEED_WAKEUP, 0);
	head = 1;
	iosd_ring_set_head(&f->r, head);
	/* Nothing new: it sleeps with the flag set, and the next publish kicks. */
	assert_false(iosd_ring_sleep_prepare(&f->r, head));
	assert_int_equal(iosd_prod_reserve(&f->p, 0, &e, &off), 0);
	e->op = IOSD_OP_BARRIER;
	iosd_prod_publish(&f->p, &kick);
	assert_true(kick);
	iosd_ring_awake(&f->r);
	assert_int_equal(iosd_prod_reserve(&f->p, 0, &e, &off), 0);
	iosd_prod_publish(&f->p, &kick);
	assert_false(kick);
	/* A producer claiming more than N entries is a corrupt ring. */
	atomic_store(&f->r.hdr->sq_tail, head + N + 1);
	assert_int_equal(iosd_ring_pending(&f->r, head), UINT32_MAX);
}

static void test_append_assign(void **state)
{
	struct fixture *f = *state;
	uint32_t pos = put(f, IOSD_OP_APPEND, 10, NULL);
	struct iosd_entry *e = iosd_ring_entry(&f->r, pos);

	assert_int_equal(iosd_entry_state(e), IOSD_ST_PUBLISHED);
	iosd_ring_assign(&f->r, pos, 4096);
	assert_int_equal(iosd_entry_state(e), IOSD_ST_INGESTED);
	assert_int_equal(e->result2, 4096);
	iosd_ring_complete(&f->r, pos, 10, 4096);
	assert_int_equal(iosd_entry_state(e), IOSD_ST_DONE);
	assert_int_equal(e->result, 10);
}

struct waiter {
	struct iosd_ring *r;
	uint32_t pos;
	int done;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	struct iosd_entry *e = iosd_ring_entry(w->r, w->pos);

	for (;;) {
		uint32_t seen = iosd_ring_cq_seq(w->r);

		if (iosd_entry_state(e) == IOSD_ST_DONE)
			break;
		iosd_ring_wait(w->r, seen, 5000);
	}
	w->done = 1;
	return NULL;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Four threads wait for four entries; completing them one by one wakes
 * each, with no lost wake-up (the 5 s timeout would show as slowness). */
static void test_futex_threads(void **state)
{
	struct fixture *f = *state;
	struct waiter w[4];
	pthread_t t[4];
	uint64_t t0 = now_ms();

	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct waiter){ .r = &f->r, .pos = put(f, IOSD_OP_BARRIER, 0, NULL) };
		assert_int_equal(pthread_create(&t[i], NULL, wait_thread, &w[i]), 0);
	}
	usleep(20000);
	for (unsigned i = 0; i < 4; i++) {
		iosd_ring_complete(&f->r, w[i].pos, 0, 0);
		iosd_ring_notify(&f->r);
		usleep(2000);
	}
	for (unsigned i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].done, 1);
	}
	assert_true(now_ms() - t0 < 2000);
	assert_int_equal(atomic_load(&f->r.hdr->waiters), 0);
}

/* The same across processes: a memfd mapped by a parent (the "daemon")
 * and a child (the "client"), as the real ring is. */
static void test_futex_processes(void **state)
{
	uint64_t size = iosd_ring_bytes(N, D);
	int fd = memfd_create("test-ring", MFD_CLOEXEC);
	struct iosd_ring r, v;
	struct iosd_prod p;
	uint64_t slot_end[N];
	uint8_t hold[N] = { 0 };
	void *a, *b;
	uint32_t pos;
	pid_t pid;
	int st;

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	a = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(a != MAP_FAILED && b != MAP_FAILED);
	iosd_ring_init(&r, a, N, D);
	iosd_prod_init(&p, &r, slot_end, hold);
	assert_int_equal(iosd_ring_view(&v, b, size, N, D), 0);
	{
		struct iosd_entry *e;
		uint64_t off;
		bool kick;

		assert_int_equal(iosd_prod_reserve(&p, 0, &e, &off), 0);
		e->op = IOSD_OP_BARRIER;
		pos = iosd_prod_publish(&p, &kick);
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct waiter w = { .r = &r, .pos = pos };

		wait_thread(&w);
		_exit(iosd_ring_entry(&r, pos)->result == 42 ? 0 : 1);
	}
	usleep(50000);
	/* The daemon side completes through its own mapping. */
	iosd_ring_complete(&v, pos, 42, 0);
	iosd_ring_notify(&v);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	munmap(a, size);
	munmap(b, size);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry),
		cmocka_unit_test_setup_teardown(test_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_entries_and_reclaim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_data_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_entry_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doorbell, setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_assign, setup, teardown),
		cmocka_unit_test_setup_teardown(test_futex_threads, setup, teardown),
		cmocka_unit_test(test_futex_processes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
