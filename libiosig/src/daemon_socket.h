/* SPDX-License-Identifier: MIT */
/*
 * daemon_socket.h - where iosigd listens and which daemon a process may
 * talk to (docs/daemon.md, "Modes and sockets"): the one resolution that
 * the client (client.c), `iosig status` and the daemon's --user mode
 * share.  Private.
 *
 * A process looks for the daemon at, in order: $IOSIG_DAEMON_SOCKET alone
 * when it is set ("" = no daemon); else its user daemon's socket,
 * $XDG_RUNTIME_DIR/iosigd.sock (without XDG_RUNTIME_DIR, for a user other
 * than root, /run/user/UID/iosigd.sock, where systemd puts the runtime
 * directory); then the system daemon's, /run/iosigd/iosigd.sock.  Like
 * every IOSIG_* path, the variables are ignored in privileged processes
 * (env.h).  A daemon is used only if it runs as root or as the process's
 * own effective uid (SO_PEERCRED).
 */
#ifndef IOSIG_DAEMON_SOCKET_H
#define IOSIG_DAEMON_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define DSOCK_SYSTEM_DIR "/run/iosigd"
#define DSOCK_SYSTEM DSOCK_SYSTEM_DIR "/iosigd.sock"
#define DSOCK_NAME "iosigd.sock"
/* Longest socket path, NUL included (sockaddr_un.sun_path). */
#define DSOCK_PATH_MAX 108
/* Candidates at most. */
#define DSOCK_MAX 2

/* The sockets to try, in order, into paths[]; returns how many (0: the
 * daemon is disabled by IOSIG_DAEMON_SOCKET=""). */
unsigned dsock_candidates(char paths[DSOCK_MAX][DSOCK_PATH_MAX]);

/*
 * Connects a SOCK_SEQPACKET socket (close-on-exec) to path.  With `trust`,
 * refuses (-EPERM) a daemon that is neither root's nor this effective
 * uid's.  Returns the descriptor, or -errno with a sentence in why[] (may
 * be NULL) saying what went wrong.  The peer's uid goes to *ret_uid (may
 * be NULL) when connected.
 */
int dsock_connect(const char *path, bool trust, uid_t *ret_uid, char *why, size_t whylen);

/*
 * The user daemon's socket for `iosigd --user`: $XDG_RUNTIME_DIR/iosigd.sock,
 * where XDG_RUNTIME_DIR must be an absolute path to a directory (not a
 * link) that this real uid owns with mode 0700, as pam_systemd makes it.
 * 0 with the path in buf, or -errno with what to do in err.
 */
int dsock_user_path(char *buf, size_t size, char *err, size_t errlen);

#endif /* IOSIG_DAEMON_SOCKET_H */
