/* SPDX-License-Identifier: MIT */
/*
 * proto.h - the control messages between a client (libiosig, the
 * iosig-redirect preload) and iosigd (docs/daemon.md "The protocol").
 *
 * A Unix SOCK_SEQPACKET socket: one message per packet.  Every message is
 * a fixed header followed by a body whose layout depends on the type; both
 * sides are on one machine, so fields are in the machine's byte order.
 * Descriptors travel as SCM_RIGHTS ancillary data with the message that
 * needs them (iosd_type_fds()).
 *
 * Decoding validates everything a peer could get wrong or lie about: the
 * magic, the version, the type, a length exactly right for the type, enums
 * in range, reserved fields zero, strings NUL-terminated inside their field
 * and free of control characters.  A message that fails gets a reason (a
 * static string) for the log, and the session is closed.
 *
 * No dependency beyond libc: linked into libiosig, the preload core and
 * iosigd alike.
 */
#ifndef IOSIG_PROTO_H
#define IOSIG_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IOSD_MAGIC 0x44534f49u      /* "IOSD" in memory order on little-endian machines */
#define IOSD_VERSION_MIN 2          /* oldest protocol version this code speaks */
#define IOSD_VERSION 2              /* newest */

/* Largest message (a REGISTER with the longest signature); receivers use a
 * buffer one byte larger to see an oversized packet as such. */
#define IOSD_MSG_MAX 8192
/* Longest canonical signature text, NUL included. */
#define IOSD_SIG_MAX 4096
/* Text of a STATUS_REPLY fragment, at most. */
#define IOSD_STATUS_CHUNK 4096

enum iosd_type {
	IOSD_HELLO = 1,        /* client: version range, pid, ring geometry; + memfd, kick eventfd */
	IOSD_WELCOME = 2,      /* daemon: chosen version, session id, limits */
	IOSD_REGISTER = 3,     /* client: a tagged descriptor; + the descriptor */
	IOSD_REGISTERED = 4,   /* daemon: the answer to one REGISTER */
	IOSD_UNREGISTER = 5,   /* client: forget a handle */
	IOSD_STATUS = 6,       /* any: ask for the daemon's status */
	IOSD_STATUS_REPLY = 7, /* daemon: a fragment of the status JSON text */
	IOSD_ERROR = 8,        /* daemon: the session is closed after this */
	IOSD_TYPE_MAX = 8
};

/* Every message starts with this. */
struct iosd_hdr {
	uint32_t magic;        /* IOSD_MAGIC */
	uint16_t version;      /* protocol version of the message */
	uint16_t type;         /* enum iosd_type */
	uint32_t length;       /* whole message, header included */
	uint32_t seq;          /* sender's message counter; answers repeat the question's */
};

/* HELLO: ancillary memfd (the ring, sealed against shrinking) and the
 * "kick daemon" eventfd. */
struct iosd_hello {
	uint16_t ver_min, ver_max;   /* versions the client speaks */
	uint32_t pid;                /* the client's pid (checked against SO_PEERCRED) */
	uint32_t ring_entries;       /* power of two, IOSD_RING_ENTRIES_MIN..MAX */
	uint32_t reserved0;          /* 0 */
	uint64_t ring_data;          /* data area bytes, power of two, IOSD_RING_DATA_MIN..MAX */
	uint64_t ring_bytes;         /* memfd size: iosd_ring_bytes(entries, data) */
};

/* WELCOME: the session is open. */
struct iosd_welcome {
	uint16_t version;            /* the version both speak from now on */
	uint16_t reserved0;
	uint32_t session;            /* id in the daemon's log and status */
	uint32_t max_fds;            /* registered descriptors allowed */
	uint32_t reserved1;
	uint64_t max_queued;         /* bytes ingested and not completed, at most */
};

/* Declared access pattern of a registered file (the signature's). */
enum iosd_pattern {
	IOSD_PATTERN_UNKNOWN = 0,
	IOSD_PATTERN_SEQUENTIAL = 1,
	IOSD_PATTERN_RANDOM = 2,
};

/* REGISTER: ancillary descriptor = the tagged file.  Followed by sig_len
 * bytes of canonical signature text, NUL included. */
struct iosd_register {
	uint32_t handle;             /* the client's name for the file in ring entries */
	uint32_t open_flags;         /* open(2) flags of the descriptor */
	uint64_t dev, ino;           /* st_dev, st_ino (checked against the descriptor) */
	uint64_t stream;             /* stream identity (the client's pid unless told otherwise) */
	uint64_t size_per_io;        /* signature's size_per_io, bytes, 0 = not declared */
	uint8_t pattern;             /* enum iosd_pattern */
	uint8_t reserved[3];         /* 0 */
	uint32_t sig_len;            /* 1..IOSD_SIG_MAX */
	/* char sig[sig_len] follows */
};

#define IOSD_NAME_MAX 64
#define IOSD_TEXT_MAX 192

/* REGISTERED flags. */
#define IOSD_REG_TIERED 1u         /* the device's policy keeps data in a tier: if the daemon
                                      dies, wait for a restarted one (its recovery puts that
                                      data home) before plain I/O (docs/tiers.md) */

/* REGISTERED: error 0 and the device and policy now in charge of the
 * handle, or -errno and why (the client then does plain I/O on it). */
struct iosd_registered {
	uint32_t handle;
	int32_t error;               /* 0 or -errno */
	uint32_t flags;              /* IOSD_REG_* */
	uint32_t reserved0;
	char device[IOSD_NAME_MAX];  /* NUL-terminated */
	char policy[IOSD_NAME_MAX];
	char message[IOSD_TEXT_MAX];
};

/* UNREGISTER: the client closed its last descriptor of the handle (after a
 * barrier); the daemon closes its copy. */
struct iosd_unregister {
	uint32_t handle;
	uint32_t reserved0;
};

#define IOSD_STATUS_MORE 1u          /* another fragment follows */

/* STATUS_REPLY: len bytes of JSON text (no NUL) follow. */
struct iosd_status_reply {
	uint32_t flags;              /* IOSD_STATUS_MORE */
	uint32_t len;                /* 0..IOSD_STATUS_CHUNK */
};

/* ERROR: why the daemon closes the session. */
struct iosd_error {
	int32_t error;               /* -errno */
	uint32_t reserved0;
	char message[IOSD_TEXT_MAX];
};

/* A decoded, validated message.  Bodies are copies (aligned, safe to keep);
 * `text` points into the buffer that was decoded. */
struct iosd_msg {
	struct iosd_hdr hdr;
	union {
		struct iosd_hello hello;
		struct iosd_welcome welcome;
		struct iosd_register reg;
		struct iosd_registered registered;
		struct iosd_unregister unregister;
		struct iosd_status_reply status;
		struct iosd_error error;
	} u;
	const char *text;            /* REGISTER: the signature; STATUS_REPLY: the JSON text */
	size_t text_len;             /* bytes of text (REGISTER: without the NUL) */
};

/* Descriptors a message of `type` carries (HELLO 2, REGISTER 1, else 0). */
unsigned iosd_type_fds(unsigned type);
/* "HELLO" ... or "unknown". */
const char *iosd_type_name(unsigned type);

/*
 * Builds a message in buf[size]: header (magic, version, type, length,
 * seq), the body of body_len bytes, then extra_len bytes of `extra` (the
 * REGISTER signature, the STATUS_REPLY text).  Returns the message length,
 * or -EMSGSIZE when it does not fit or exceeds IOSD_MSG_MAX.  Does not
 * validate: the sender builds what it means.
 */
int iosd_encode(void *buf, size_t size, unsigned version, unsigned type, uint32_t seq,
		const void *body, size_t body_len, const void *extra, size_t extra_len);

/*
 * Validates a received message of len bytes and copies it into *ret.
 * `version`: 0 before the handshake (any version in the supported range),
 * else the negotiated one, which every later message must carry.
 * 0, or -EBADMSG with a static reason in *ret_why (never NULL then).
 */
int iosd_decode(const void *buf, size_t len, unsigned version, struct iosd_msg *ret,
		const char **ret_why);

/* Copies src into a fixed string field dst[size] (truncated, NUL-filled). */
void iosd_strfield(char *dst, size_t size, const char *src);

#endif /* IOSIG_PROTO_H */
