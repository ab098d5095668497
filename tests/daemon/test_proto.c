/* SPDX-License-Identifier: MIT */
/*
 * The control messages of the daemon protocol (iosigd/proto/proto.c):
 * every type round-trips through encode and decode, and every way a peer
 * can get a message wrong is refused with its own reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "proto.h"

static uint8_t buf[IOSD_MSG_MAX + 64];

static struct iosd_hello good_hello(void)
{
	return (struct iosd_hello){ .ver_min = IOSD_VERSION_MIN, .ver_max = IOSD_VERSION, .pid = 1234,
				    .ring_entries = 1024, .ring_data = 4 << 20,
				    .ring_bytes = 123 };
}

static int enc(unsigned type, const void *body, size_t blen, const void *extra, size_t elen)
{
	int n = iosd_encode(buf, sizeof(buf), IOSD_VERSION, type, 7, body, blen, extra, elen);

	assert_true(n > 0);
	return n;
}

static void test_roundtrip(void **state)
{
	struct iosd_hello h = good_hello();
	struct iosd_welcome w = { .version = IOSD_VERSION, .session = 3, .max_fds = 10, .max_queued = 1 << 20 };
	struct iosd_register r = { .handle = 5, .open_flags = 02, .dev = 8, .ino = 99, .stream = 4,
				   .size_per_io = 4096, .pattern = IOSD_PATTERN_RANDOM };
	struct iosd_registered rd = { .handle = 5, .error = 0 };
	struct iosd_unregister u = { .handle = 5 };
	struct iosd_status_reply sr = { .flags = IOSD_STATUS_MORE, .len = 8 };
	struct iosd_error e = { .error = -EPROTO };
	const char *sig = "random size_per_io(4096)";
	struct iosd_msg m;
	const char *why = NULL;
	int n;

	n = enc(IOSD_HELLO, &h, sizeof(h), NULL, 0);
	assert_int_equal(iosd_decode(buf, (size_t)n, 0, &m, &why), 0);
	assert_int_equal(m.hdr.type, IOSD_HELLO);
	assert_int_equal(m.hdr.seq, 7);
	assert_int_equal(m.u.hello.pid, 1234);
	assert_int_equal(m.u.hello.ring_data, 4 << 20);

	n = enc(IOSD_WELCOME, &w, sizeof(w), NULL, 0);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), 0);
	assert_int_equal(m.u.welcome.session, 3);

	r.sig_len = (uint32_t)strlen(sig) + 1;
	n = enc(IOSD_REGISTER, &r, sizeof(r), sig, r.sig_len);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), 0);
	assert_int_equal(m.u.reg.ino, 99);
	assert_string_equal(m.text, sig);
	assert_int_equal(m.text_len, strlen(sig));

	iosd_strfield(rd.device, sizeof(rd.device), "/mnt/hdd");
	iosd_strfield(rd.policy, sizeof(rd.policy), "bid-hdd");
	iosd_strfield(rd.message, sizeof(rd.message), "");
	n = enc(IOSD_REGISTERED, &rd, sizeof(rd), NULL, 0);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), 0);
	assert_string_equal(m.u.registered.policy, "bid-hdd");

	n = enc(IOSD_UNREGISTER, &u, sizeof(u), NULL, 0);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), 0);
	assert_int_equal(m.u.unregister.handle, 5);

	n = enc(IOSD_STATUS, NULL, 0, NULL, 0);
	assert_int_equal(n, (int)sizeof(struct iosd_hdr));
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), 0);

	n = enc(IOSD_STATUS_REPLY, &sr, sizeof(sr), "{\"a\": 1}", 8);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), 0);
	assert_int_equal(m.text_len, 8);
	assert_memory_equal(m.text, "{\"a\": 1}", 8);

	iosd_strfield(e.message, sizeof(e.message), "too many sessions");
	n = enc(IOSD_ERROR, &e, sizeof(e), NULL, 0);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), 0);
	assert_int_equal(m.u.error.error, -EPROTO);
}

static void test_encode_limits(void **state)
{
	static char big[IOSD_MSG_MAX];
	struct iosd_register r = { .sig_len = IOSD_SIG_MAX };

	memset(big, 'a', sizeof(big));
	/* Too big for the buffer, and too big for the protocol. */
	assert_int_equal(iosd_encode(buf, 20, IOSD_VERSION, IOSD_REGISTER, 0, &r, sizeof(r), big, 10),
			 -EMSGSIZE);
	assert_int_equal(iosd_encode(buf, sizeof(buf), IOSD_VERSION, IOSD_REGISTER, 0, &r, sizeof(r), big,
				     sizeof(big)), -EMSGSIZE);
	/* The longest signature fits. */
	big[IOSD_SIG_MAX - 1] = '\0';
	assert_true(iosd_encode(buf, sizeof(buf), IOSD_VERSION, IOSD_REGISTER, 0, &r, sizeof(r), big,
				IOSD_SIG_MAX) > 0);
}

/* One way to get a message wrong: a mutation of a good HELLO or REGISTER
 * and the reason the decoder must give. */
struct bad_case {
	const char *name;
	void (*mutate)(uint8_t *msg, size_t *len);
	unsigned version;   /* decode with this version (0 = handshake) */
	const char *why;
};

static struct iosd_hdr *H(uint8_t *m)
{
	return (struct iosd_hdr *)m;
}

static struct iosd_hello *HB(uint8_t *m)
{
	return (struct iosd_hello *)(m + sizeof(struct iosd_hdr));
}

static struct iosd_register *RB(uint8_t *m)
{
	return (struct iosd_register *)(m + sizeof(struct iosd_hdr));
}

static void m_short(uint8_t *m, size_t *len) { *len = 10; }
static void m_magic(uint8_t *m, size_t *len) { H(m)->magic ^= 1; }
static void m_version(uint8_t *m, size_t *len) { H(m)->version = 99; }
static void m_version0(uint8_t *m, size_t *len) { H(m)->version = 0; }
static void m_type0(uint8_t *m, size_t *len) { H(m)->type = 0; }
static void m_type_big(uint8_t *m, size_t *len) { H(m)->type = 200; }
static void m_length(uint8_t *m, size_t *len) { H(m)->length += 1; }
static void m_trunc(uint8_t *m, size_t *len) { *len -= 4; H(m)->length = (uint32_t)*len; }
static void m_long(uint8_t *m, size_t *len) { *len += 4; H(m)->length = (uint32_t)*len; }
static void m_huge(uint8_t *m, size_t *len) { *len = IOSD_MSG_MAX + 1; H(m)->length = (uint32_t)*len; }
static void m_vrange(uint8_t *m, size_t *len) { HB(m)->ver_min = 2; HB(m)->ver_max = 1; }
static void m_vnone(uint8_t *m, size_t *len) { HB(m)->ver_min = 50; HB(m)->ver_max = 60; }
/* Version 1 (REGISTERED without its flags, no WRITTEN) is not spoken. */
static void m_vold(uint8_t *m, size_t *len) { HB(m)->ver_min = 1; HB(m)->ver_max = 1; }
static void m_pid(uint8_t *m, size_t *len) { HB(m)->pid = 0; }
static void m_pid_neg(uint8_t *m, size_t *len) { HB(m)->pid = 0x80000000u; }
static void m_hres(uint8_t *m, size_t *len) { HB(m)->reserved0 = 1; }
static void m_geom(uint8_t *m, size_t *len) { HB(m)->ring_entries = 1000; }
static void m_geom0(uint8_t *m, size_t *len) { HB(m)->ring_data = 0; }
static void m_reg_retype(uint8_t *m, size_t *len) { H(m)->type = IOSD_UNREGISTER; }

static const struct bad_case hello_cases[] = {
	{ "truncated header", m_short, 0, "truncated header" },
	{ "magic", m_magic, 0, "bad magic" },
	{ "version", m_version, 0, "unsupported protocol version" },
	{ "version 0", m_version0, 0, "unsupported protocol version" },
	{ "negotiated version", m_version, IOSD_VERSION, "unsupported protocol version" },
	{ "type 0", m_type0, 0, "unknown message type" },
	{ "type 200", m_type_big, 0, "unknown message type" },
	{ "length field", m_length, 0, "length field does not match the message" },
	{ "truncated body", m_trunc, 0, "truncated body" },
	{ "trailing bytes", m_long, 0, "body longer than its type" },
	{ "oversized", m_huge, 0, "message too long" },
	{ "version range", m_vrange, 0, "HELLO: bad version range" },
	{ "no common version", m_vnone, 0, "HELLO: no protocol version in common" },
	{ "version 1 only", m_vold, 0, "HELLO: no protocol version in common" },
	{ "pid 0", m_pid, 0, "HELLO: bad pid" },
	{ "pid too large", m_pid_neg, 0, "HELLO: bad pid" },
	{ "reserved", m_hres, 0, "HELLO: reserved field not zero" },
	{ "entries not a power of two", m_geom, 0, "HELLO: ring geometry not a power of two" },
	{ "no data", m_geom0, 0, "HELLO: ring geometry not a power of two" },
	{ "UNREGISTER of HELLO's length", m_reg_retype, 0, "body longer than its type" },
};

static void m_sig_nul(uint8_t *m, size_t *len) { m[*len - 1] = 'x'; }
static void m_sig_ctl(uint8_t *m, size_t *len) { m[*len - 3] = '\n'; }
static void m_sig_len0(uint8_t *m, size_t *len) { RB(m)->sig_len = 0; }
static void m_sig_len_big(uint8_t *m, size_t *len) { RB(m)->sig_len = IOSD_SIG_MAX + 1; }
static void m_sig_len_off(uint8_t *m, size_t *len) { RB(m)->sig_len -= 1; }
static void m_pattern(uint8_t *m, size_t *len) { RB(m)->pattern = 3; }
static void m_rres(uint8_t *m, size_t *len) { RB(m)->reserved[2] = 1; }

static const struct bad_case register_cases[] = {
	{ "signature without NUL", m_sig_nul, IOSD_VERSION, "REGISTER: signature not NUL-terminated" },
	{ "control character", m_sig_ctl, IOSD_VERSION, "REGISTER: control character in the signature" },
	{ "signature length 0", m_sig_len0, IOSD_VERSION, "REGISTER: bad signature length" },
	{ "signature length too big", m_sig_len_big, IOSD_VERSION, "REGISTER: bad signature length" },
	{ "signature length off by one", m_sig_len_off, IOSD_VERSION,
	  "REGISTER: length does not match the signature length" },
	{ "pattern", m_pattern, IOSD_VERSION, "REGISTER: bad pattern" },
	{ "reserved", m_rres, IOSD_VERSION, "REGISTER: reserved field not zero" },
	{ "truncated fixed part", m_trunc, IOSD_VERSION, "REGISTER: length does not match the signature length" },
};

static void run_cases(const struct bad_case *cases, size_t n, const uint8_t *good, size_t glen)
{
	static uint8_t m[IOSD_MSG_MAX + 64];
	struct iosd_msg out;

	for (size_t i = 0; i < n; i++) {
		const char *why = NULL;
		size_t len = glen;

		memcpy(m, good, glen);
		memset(m + glen, 0, sizeof(m) - glen);
		cases[i].mutate(m, &len);
		memset(&out, 0x5a, sizeof(out));
		if (iosd_decode(m, len, cases[i].version, &out, &why) != -EBADMSG)
			fail_msg("%s: accepted", cases[i].name);
		if (!why || strcmp(why, cases[i].why))
			fail_msg("%s: reason '%s', expected '%s'", cases[i].name, why ? why : "(none)",
				 cases[i].why);
	}
}

static void test_bad_hello(void **state)
{
	struct iosd_hello h = good_hello();
	uint8_t good[128];
	int n = iosd_encode(good, sizeof(good), IOSD_VERSION, IOSD_HELLO, 1, &h, sizeof(h), NULL, 0);

	assert_true(n > 0);
	run_cases(hello_cases, sizeof(hello_cases) / sizeof(hello_cases[0]), good, (size_t)n);
}

static void test_bad_register(void **state)
{
	struct iosd_register r = { .handle = 1, .sig_len = 8 };
	uint8_t good[128];
	int n = iosd_encode(good, sizeof(good), IOSD_VERSION, IOSD_REGISTER, 1, &r, sizeof(r), "random\0", 8);

	assert_true(n > 0);
	run_cases(register_cases, sizeof(register_cases) / sizeof(register_cases[0]), good,
		  (size_t)n);
}

/* The daemon's answers are checked as strictly by the client. */
static void test_bad_answers(void **state)
{
	struct iosd_registered rd = { .handle = 1 };
	struct iosd_welcome w = { .version = IOSD_VERSION, .session = 1, .max_fds = 1, .max_queued = 1 };
	struct iosd_error e = { .error = -EIO };
	struct iosd_status_reply sr = { .len = 4 };
	struct iosd_msg m;
	const char *why;
	int n;

	memset(rd.device, 'x', sizeof(rd.device));   /* no NUL */
	n = enc(IOSD_REGISTERED, &rd, sizeof(rd), NULL, 0);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), -EBADMSG);
	assert_string_equal(why, "REGISTERED: malformed string field");
	memset(rd.device, 0, sizeof(rd.device));
	rd.device[0] = 'a';
	rd.device[5] = 'b';                          /* garbage after the NUL */
	n = enc(IOSD_REGISTERED, &rd, sizeof(rd), NULL, 0);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), -EBADMSG);
	rd.device[5] = 0;
	rd.error = 5;
	n = enc(IOSD_REGISTERED, &rd, sizeof(rd), NULL, 0);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), -EBADMSG);
	assert_string_equal(why, "REGISTERED: bad error code");

	w.version = 9;
	n = enc(IOSD_WELCOME, &w, sizeof(w), NULL, 0);
	assert_int_equal(iosd_decode(buf, (size_t)n, 0, &m, &why), -EBADMSG);
	assert_string_equal(why, "WELCOME: unsupported version");
	w.version = IOSD_VERSION;
	w.max_fds = 0;
	n = enc(IOSD_WELCOME, &w, sizeof(w), NULL, 0);
	assert_int_equal(iosd_decode(buf, (size_t)n, 0, &m, &why), -EBADMSG);

	e.error = 0;
	n = enc(IOSD_ERROR, &e, sizeof(e), NULL, 0);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), -EBADMSG);
	assert_string_equal(why, "ERROR: bad error code");

	n = enc(IOSD_STATUS_REPLY, &sr, sizeof(sr), "abc", 3);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), -EBADMSG);
	assert_string_equal(why, "STATUS_REPLY: bad text length");
	sr.flags = 4;
	sr.len = 3;
	n = enc(IOSD_STATUS_REPLY, &sr, sizeof(sr), "abc", 3);
	assert_int_equal(iosd_decode(buf, (size_t)n, IOSD_VERSION, &m, &why), -EBADMSG);
	assert_string_equal(why, "STATUS_REPLY: unknown flags");
}

static void test_names(void **state)
{
	assert_string_equal(iosd_type_name(IOSD_HELLO), "HELLO");
	assert_string_equal(iosd_type_name(0), "unknown");
	assert_string_equal(iosd_type_name(99), "unknown");
	assert_int_equal(iosd_type_fds(IOSD_HELLO), 2);
	assert_int_equal(iosd_type_fds(IOSD_REGISTER), 1);
	assert_int_equal(iosd_type_fds(IOSD_STATUS), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_encode_limits),
		cmocka_unit_test(test_bad_hello),
		cmocka_unit_test(test_bad_register),
		cmocka_unit_test(test_bad_answers),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
