/* SPDX-License-Identifier: MIT */
/*
 * proto.c - encoding and strict validation of the control messages (see
 * proto.h).
 */
#include "proto.h"

#include <errno.h>
#include <string.h>

_Static_assert(sizeof(struct iosd_hdr) == 16, "header layout");
_Static_assert(sizeof(struct iosd_hello) == 32, "HELLO layout");
_Static_assert(sizeof(struct iosd_welcome) == 24, "WELCOME layout");
_Static_assert(sizeof(struct iosd_register) == 48, "REGISTER layout");
_Static_assert(sizeof(struct iosd_registered) == 16 + 2 * IOSD_NAME_MAX + IOSD_TEXT_MAX,
	       "REGISTERED layout");
_Static_assert(sizeof(struct iosd_unregister) == 8, "UNREGISTER layout");
_Static_assert(sizeof(struct iosd_status_reply) == 8, "STATUS_REPLY layout");
_Static_assert(sizeof(struct iosd_error) == 8 + IOSD_TEXT_MAX, "ERROR layout");
_Static_assert(sizeof(struct iosd_hdr) + sizeof(struct iosd_register) + IOSD_SIG_MAX <=
	       IOSD_MSG_MAX, "the longest REGISTER fits");
_Static_assert(sizeof(struct iosd_hdr) + sizeof(struct iosd_status_reply) + IOSD_STATUS_CHUNK <=
	       IOSD_MSG_MAX, "the longest STATUS_REPLY fits");

static const char *const type_names[IOSD_TYPE_MAX + 1] = {
	[IOSD_HELLO] = "HELLO", [IOSD_WELCOME] = "WELCOME", [IOSD_REGISTER] = "REGISTER",
	[IOSD_REGISTERED] = "REGISTERED", [IOSD_UNREGISTER] = "UNREGISTER",
	[IOSD_STATUS] = "STATUS", [IOSD_STATUS_REPLY] = "STATUS_REPLY", [IOSD_ERROR] = "ERROR",
};

const char *iosd_type_name(unsigned type)
{
	return type >= 1 && type <= IOSD_TYPE_MAX ? type_names[type] : "unknown";
}

unsigned iosd_type_fds(unsigned type)
{
	return type == IOSD_HELLO ? 2 : type == IOSD_REGISTER ? 1 : 0;
}

/* Fixed body size of each type (the variable part of REGISTER and
 * STATUS_REPLY comes after it). */
static size_t body_size(unsigned type)
{
	switch (type) {
	case IOSD_HELLO: return sizeof(struct iosd_hello);
	case IOSD_WELCOME: return sizeof(struct iosd_welcome);
	case IOSD_REGISTER: return sizeof(struct iosd_register);
	case IOSD_REGISTERED: return sizeof(struct iosd_registered);
	case IOSD_UNREGISTER: return sizeof(struct iosd_unregister);
	case IOSD_STATUS: return 0;
	case IOSD_STATUS_REPLY: return sizeof(struct iosd_status_reply);
	case IOSD_ERROR: return sizeof(struct iosd_error);
	default: return 0;
	}
}

int iosd_encode(void *buf, size_t size, unsigned version, unsigned type, uint32_t seq,
		const void *body, size_t body_len, const void *extra, size_t extra_len)
{
	struct iosd_hdr h;
	size_t total = sizeof(h) + body_len + extra_len;
	uint8_t *p = buf;

	if (body_len > IOSD_MSG_MAX || extra_len > IOSD_MSG_MAX || total > IOSD_MSG_MAX ||
	    total > size)
		return -EMSGSIZE;
	h.magic = IOSD_MAGIC;
	h.version = (uint16_t)version;
	h.type = (uint16_t)type;
	h.length = (uint32_t)total;
	h.seq = seq;
	memcpy(p, &h, sizeof(h));
	if (body_len)
		memcpy(p + sizeof(h), body, body_len);
	if (extra_len)
		memcpy(p + sizeof(h) + body_len, extra, extra_len);
	return (int)total;
}

void iosd_strfield(char *dst, size_t size, const char *src)
{
	size_t n = src ? strnlen(src, size - 1) : 0;

	memcpy(dst, src ? src : "", n);
	memset(dst + n, 0, size - n);
}

/* A fixed string field: NUL inside it, printable before, zero after. */
static bool strfield_ok(const char *s, size_t size)
{
	size_t n = strnlen(s, size);

	if (n == size)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	for (size_t i = n; i < size; i++)
		if (s[i])
			return false;
	return true;
}

/* Text without control characters (the signature, the status JSON). */
static bool text_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static bool pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static int bad(const char **ret_why, const char *why)
{
	*ret_why = why;
	return -EBADMSG;
}

static int check_body(struct iosd_msg *m, const uint8_t *rest, size_t rest_len, const char **why)
{
	switch (m->hdr.type) {
	case IOSD_HELLO: {
		const struct iosd_hello *h = &m->u.hello;

		if (h->ver_min < 1 || h->ver_min > h->ver_max)
			return bad(why, "HELLO: bad version range");
		if (h->ver_max < IOSD_VERSION_MIN || h->ver_min > IOSD_VERSION)
			return bad(why, "HELLO: no protocol version in common");
		if (!h->pid || h->pid > 0x7fffffffu)
			return bad(why, "HELLO: bad pid");
		if (h->reserved0)
			return bad(why, "HELLO: reserved field not zero");
		if (!pow2(h->ring_entries) || !pow2(h->ring_data))
			return bad(why, "HELLO: ring geometry not a power of two");
		/* Bounds and the exact size are the ring's (iosd_ring_bytes()),
		 * checked by the daemon against its limits and the memfd. */
		return 0;
	}
	case IOSD_WELCOME: {
		const struct iosd_welcome *w = &m->u.welcome;

		if (w->version < IOSD_VERSION_MIN || w->version > IOSD_VERSION)
			return bad(why, "WELCOME: unsupported version");
		if (w->reserved0 || w->reserved1)
			return bad(why, "WELCOME: reserved field not zero");
		if (!w->max_fds || !w->max_queued)
			return bad(why, "WELCOME: zero limit");
		return 0;
	}
	case IOSD_REGISTER: {
		const struct iosd_register *r = &m->u.reg;

		if (r->pattern > IOSD_PATTERN_RANDOM)
			return bad(why, "REGISTER: bad pattern");
		if (r->reserved[0] || r->reserved[1] || r->reserved[2])
			return bad(why, "REGISTER: reserved field not zero");
		if (r->sig_len < 1 || r->sig_len > IOSD_SIG_MAX)
			return bad(why, "REGISTER: bad signature length");
		if (rest_len != r->sig_len)
			return bad(why, "REGISTER: length does not match the signature length");
		if (rest[r->sig_len - 1] != '\0')
			return bad(why, "REGISTER: signature not NUL-terminated");
		if (!text_ok((const char *)rest, r->sig_len - 1))
			return bad(why, "REGISTER: control character in the signature");
		m->text = (const char *)rest;
		m->text_len = r->sig_len - 1;
		return 0;
	}
	case IOSD_REGISTERED: {
		const struct iosd_registered *r = &m->u.registered;

		if (r->error > 0 || r->error < -4095)
			return bad(why, "REGISTERED: bad error code");
		if ((r->flags & ~IOSD_REG_TIERED) || r->reserved0 || (r->error && r->flags))
			return bad(why, "REGISTERED: unknown flags or reserved field set");
		if (!strfield_ok(r->device, sizeof(r->device)) ||
		    !strfield_ok(r->policy, sizeof(r->policy)) ||
		    !strfield_ok(r->message, sizeof(r->message)))
			return bad(why, "REGISTERED: malformed string field");
		return 0;
	}
	case IOSD_UNREGISTER:
		if (m->u.unregister.reserved0)
			return bad(why, "UNREGISTER: reserved field not zero");
		return 0;
	case IOSD_STATUS:
		return 0;
	case IOSD_STATUS_REPLY: {
		const struct iosd_status_reply *s = &m->u.status;

		if (s->flags & ~IOSD_STATUS_MORE)
			return bad(why, "STATUS_REPLY: unknown flags");
		if (s->len > IOSD_STATUS_CHUNK || rest_len != s->len)
			return bad(why, "STATUS_REPLY: bad text length");
		if (!text_ok((const char *)rest, s->len))
			return bad(why, "STATUS_REPLY: control character in the text");
		m->text = (const char *)rest;
		m->text_len = s->len;
		return 0;
	}
	case IOSD_ERROR: {
		const struct iosd_error *e = &m->u.error;

		if (e->error >= 0 || e->error < -4095)
			return bad(why, "ERROR: bad error code");
		if (e->reserved0)
			return bad(why, "ERROR: reserved field not zero");
		if (!strfield_ok(e->message, sizeof(e->message)))
			return bad(why, "ERROR: malformed message");
		return 0;
	}
	default:
		return bad(why, "unknown message type");
	}
}

int iosd_decode(const void *buf, size_t len, unsigned version, struct iosd_msg *ret,
		const char **ret_why)
{
	const uint8_t *p = buf;
	struct iosd_msg m;
	size_t fixed;

	if (len < sizeof(m.hdr))
		return bad(ret_why, "truncated header");
	if (len > IOSD_MSG_MAX)
		return bad(ret_why, "message too long");
	memset(&m, 0, sizeof(m));
	memcpy(&m.hdr, p, sizeof(m.hdr));
	if (m.hdr.magic != IOSD_MAGIC)
		return bad(ret_why, "bad magic");
	if (version ? m.hdr.version != version :
		      m.hdr.version < IOSD_VERSION_MIN || m.hdr.version > IOSD_VERSION)
		return bad(ret_why, "unsupported protocol version");
	if (m.hdr.type < 1 || m.hdr.type > IOSD_TYPE_MAX)
		return bad(ret_why, "unknown message type");
	if (m.hdr.length != len)
		return bad(ret_why, "length field does not match the message");
	fixed = body_size(m.hdr.type);
	if (len < sizeof(m.hdr) + fixed)
		return bad(ret_why, "truncated body");
	if (m.hdr.type != IOSD_REGISTER && m.hdr.type != IOSD_STATUS_REPLY &&
	    len != sizeof(m.hdr) + fixed)
		return bad(ret_why, "body longer than its type");
	memcpy(&m.u, p + sizeof(m.hdr), fixed);
	if (check_body(&m, p + sizeof(m.hdr) + fixed, len - sizeof(m.hdr) - fixed, ret_why) < 0)
		return -EBADMSG;
	*ret = m;
	return 0;
}
