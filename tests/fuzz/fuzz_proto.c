/* SPDX-License-Identifier: MIT */
/*
 * fuzz_proto - the daemon protocol from arbitrary bytes, as a hostile
 * client would send it:
 *   first byte 0..127: the rest is one control message, decoded before the
 *                      handshake (version 0) and after it (IOSD_VERSION); a
 *                      message that decodes must encode back to itself;
 *   first byte 128..:  the rest is a ring as a client could leave it - a
 *                      producer tail and entries written over a real ring
 *                      of 8 entries and 64 KiB of data - consumed the way
 *                      iosigd does: pending count, copy, validate; every
 *                      entry accepted must lie inside the data area.
 * Any input must give a result or a reason, never a crash or a read out
 * of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_message(const uint8_t *p, size_t n)
{
	static uint8_t again[IOSD_MSG_MAX];
	const char *why;
	struct iosd_msg m;

	for (unsigned version = 0; version <= IOSD_VERSION; version += IOSD_VERSION) {
		if (iosd_decode(p, n, version, &m, &why) < 0) {
			if (!why || !*why)
				abort();
			continue;
		}
		/* Accepted: the bytes are exactly what encoding the decoded
		 * message gives (nothing unchecked can hide in them). */
		size_t fixed = n - sizeof(m.hdr) -
			       (m.hdr.type == IOSD_REGISTER ? m.u.reg.sig_len :
				m.hdr.type == IOSD_STATUS_REPLY ? m.u.status.len : 0);
		const void *extra = m.hdr.type == IOSD_REGISTER || m.hdr.type == IOSD_STATUS_REPLY ?
				    (const void *)(p + sizeof(m.hdr) + fixed) : NULL;
		int len = iosd_encode(again, sizeof(again), m.hdr.version, m.hdr.type, m.hdr.seq,
				      &m.u, fixed, extra, n - sizeof(m.hdr) - fixed);

		if (len != (int)n || memcmp(again, p, n))
			abort();
	}
}

static void one_ring(const uint8_t *p, size_t n)
{
	enum { NENT = 8, DATA = 64 << 10 };
	static uint64_t size;
	static void *mem;
	struct iosd_ring r;
	uint32_t head = 0, tail = 0, pending;

	if (!mem) {
		size = iosd_ring_bytes(NENT, DATA);
		mem = aligned_alloc(4096, size);
		if (!mem)
			abort();
	}
	memset(mem, 0, size);
	iosd_ring_init(&r, mem, NENT, DATA);
	/* 4 bytes of head, 4 of tail, then entries over the entry array. */
	if (n >= 8) {
		memcpy(&head, p, 4);
		memcpy(&tail, p + 4, 4);
		p += 8;
		n -= 8;
	}
	atomic_store(&r.hdr->sq_tail, tail);
	memcpy(r.entries, p, n < NENT * sizeof(struct iosd_entry) ? n : NENT * sizeof(struct iosd_entry));
	pending = iosd_ring_pending(&r, head);
	if (pending == UINT32_MAX)
		return;   /* corrupt: the daemon closes the session */
	for (uint32_t i = 0; i < pending; i++) {
		struct iosd_entry e;
		const char *why = NULL;

		iosd_ring_copy(&r, head + i, &e);
		if (iosd_entry_check(&r, &e, head + i, &why) < 0) {
			if (!why)
				abort();
			return;   /* the daemon closes the session here */
		}
		if ((e.op == IOSD_OP_WRITE || e.op == IOSD_OP_APPEND || e.op == IOSD_OP_READ) &&
		    (e.data_off + e.length > DATA || !e.length))
			abort();
		/* Touch the bytes the daemon would hand to the kernel. */
		if (e.op == IOSD_OP_WRITE || e.op == IOSD_OP_APPEND || e.op == IOSD_OP_READ)
			r.data[e.data_off + e.length - 1] ^= 1;
		if (e.op == IOSD_OP_APPEND)
			iosd_ring_assign(&r, head + i, 0);
		iosd_ring_complete(&r, head + i, 0, 0);
	}
	iosd_ring_set_head(&r, head + pending);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > IOSD_MSG_MAX + 16)
		return 0;
	if (data[0] < 128)
		one_message(data + 1, size - 1);
	else
		one_ring(data + 1, size - 1);
	return 0;
}
