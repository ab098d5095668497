/* SPDX-License-Identifier: MIT */
/*
 * realfn.h - the functions beneath an interposer, and the guard that keeps the
 * runtime's own calls away from the interposers.  Private.
 *
 * libiosig.so and iosig-redirect's LD_PRELOAD library define some of libc's
 * functions themselves (links.c: a link the runtime made behaves like the
 * file it stands for).  Each interposer calls the next definition of its
 * function - libc's, or the next layer's - found once with dlsym(RTLD_NEXT)
 * from the object that holds the interposer (real_get()).  Code of the
 * runtime itself (rd_link_check(), the redirection, finalize, gc) must see
 * the links as they are: it runs with iosig_real_busy raised, and every
 * interposer that finds it raised goes straight to the next definition.
 */
#ifndef IOSIG_REALFN_H
#define IOSIG_REALFN_H

#include <stdbool.h>

/* One function beneath the interposers. */
struct real_fn {
	const char *name;        /* its name in libc */
	void *_Atomic fn;        /* the next definition, once looked up */
};

/* Initialiser of a struct real_fn for libc's function `name`. */
#define REAL_FN_INIT(name) { #name, NULL }

/*
 * The next definition of f->name after the object realfn.c is linked into,
 * looked up on first use and kept; NULL if there is none (the interposer
 * then fails with ENOSYS).  Lock-free; a lookup that races another one
 * finds the same pointer.
 */
void *real_get(struct real_fn *f);

/*
 * How deep this thread is inside the runtime: not 0 while libiosig does its
 * own work (an entry point, an interposer's check of a link).  One variable
 * for every layer of interposers in a process: libiosig.so and
 * libiosig-preload.so both define and export it, so that in a program that
 * links libiosig.so and runs under iosig-redirect the preload's definition,
 * which comes first, is the one both layers use, and neither acts inside the
 * other's runtime.  initial-exec: both are loaded at start-up, and an access
 * from an interposer must never call into the dynamic loader.  Not API.
 */
extern __thread unsigned iosig_real_busy
	__attribute__((visibility("default"), tls_model("initial-exec")));

/*
 * In an interposer of an open-like call (open(const char *, int flags,
 * ...)): reads the mode argument into `mode` only when the flags say there
 * is one, as libc does; `last` is the last named parameter.  Needs
 * <stdarg.h> and <fcntl.h>.
 */
#define OPEN_MODE(flags, last, mode)                     \
	do {                                             \
		if (__OPEN_NEEDS_MODE(flags)) {          \
			va_list ap_;                     \
			va_start(ap_, last);             \
			mode = (mode_t)va_arg(ap_, int); \
			va_end(ap_);                     \
		}                                        \
	} while (0)

/* Entering and leaving the runtime's own work on this thread. */
static inline void real_enter(void)
{
	iosig_real_busy++;
}

static inline void real_leave(void)
{
	iosig_real_busy--;
}

/* True while this thread is inside the runtime: interposers pass through. */
static inline bool real_inside(void)
{
	return __builtin_expect(iosig_real_busy != 0, 0);
}

#endif /* IOSIG_REALFN_H */
