/* SPDX-License-Identifier: MIT */
/*
 * iosig_annotate.h - I/O signatures that leave a build without an iosig
 * compiler plugin exactly as it was: no code, and no warning even under
 * -Wall -Wextra -Werror (a bare '#pragma io sig' draws -Wunknown-pragmas
 * there).  The way OpenMP code tests _OPENMP: the GCC and clang plugins
 * predefine __IOSIG__ (the version of the pragma language they understand,
 * 2 at present), and these macros become the pragmas only then.
 *
 *   IOSIG_SIGDEF(name("ckpt") persist sequential)        file or function scope
 *   IOSIG_JOBWIDE(lifetime(2*d))
 *   IOSIG_OPENER(fopen_output_safely, path(1), mode("wx"))  file scope
 *
 *   IOSIG_SIG(name("ckpt") totalsize(n * GiB))
 *   int fd = open(path, O_CREAT | O_WRONLY, 0644);       the statement after it
 *
 * A pragma stands between statements, never inside an expression (GCC's
 * parser rejects it there).  A macro that must be an expression writes
 *
 *   #define OPEN_TMP(p) IOSIG_CALL((tmp), open((p), O_CREAT | O_RDWR, 0600))
 *   int fd = OPEN_TMP(p);
 *
 * which is a GNU statement expression ({ pragma call; }) with a plugin and
 * the call as it is without one.  The signature is the first argument, in
 * parentheses; the call, with its commas, is the rest.
 *
 * Values are macro-expanded before the plugin reads them, as in a pragma.
 * A variable that only a signature reads is unused without the plugin:
 * give it another use, or mark it (void).  See iosig-signature(7).
 */
#ifndef IOSIG_ANNOTATE_H
#define IOSIG_ANNOTATE_H

/* "io" and the arguments, after macro expansion, as one _Pragma string. */
#define IOSIG_PRAGMA_STR_(...) #__VA_ARGS__
#define IOSIG_PRAGMA_(...) _Pragma(IOSIG_PRAGMA_STR_(io __VA_ARGS__))
#define IOSIG_UNPAREN_(...) __VA_ARGS__

#if defined(__IOSIG__)
#define IOSIG_PRAGMA(...) IOSIG_PRAGMA_(__VA_ARGS__)
#elif defined(__clang__)
/*
 * clang loads the plugin without running it when it only preprocesses (-E,
 * -save-temps, ccache), so __IOSIG__ is not defined there: the pragma is
 * kept for the compilation of the output, and clang without the plugin is
 * told not to warn about it.
 */
#define IOSIG_PRAGMA(...)                                                 \
	_Pragma("clang diagnostic push")                                  \
	_Pragma("clang diagnostic ignored \"-Wunknown-pragmas\"")          \
	IOSIG_PRAGMA_(__VA_ARGS__)                                        \
	_Pragma("clang diagnostic pop")
#else
#define IOSIG_PRAGMA(...)
#endif

#define IOSIG_SIG(...) IOSIG_PRAGMA(sig __VA_ARGS__)
#define IOSIG_SIGDEF(...) IOSIG_PRAGMA(sigdef __VA_ARGS__)
#define IOSIG_JOBWIDE(...) IOSIG_PRAGMA(jobwide __VA_ARGS__)
#define IOSIG_OPENER(...) IOSIG_PRAGMA(opener(__VA_ARGS__))

#if defined(__IOSIG__) || defined(__clang__)
#define IOSIG_CALL(sig, ...)                                                    \
	__extension__({                                                         \
		IOSIG_SIG(IOSIG_UNPAREN_ sig)                                   \
		__VA_ARGS__;                                                    \
	})
#else
#define IOSIG_CALL(sig, ...) (__VA_ARGS__)
#endif

#endif /* IOSIG_ANNOTATE_H */
