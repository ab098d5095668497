/*
 * Mistakes in the syntax of '#pragma io opener' are errors at the offending
 * token that say what to write (c_opener_decl.c: the function it declares).
 */
#include <fcntl.h>
#include <stdio.h>

FILE *wrap(const char *name, const char *mode);
int wrapat(int dirfd, const char *name, int flags, ...);

#pragma io opener wrap /* expect-error#19: expected '(' after 'opener', as in opener(fopen_output_safely, path(1), mode("wx")) */
#pragma io opener(wrap) /* expect-error#19: '#pragma io opener' needs path(N): which argument of 'wrap' names the file */
#pragma io opener(wrap, path(1)) /* expect-error#19: '#pragma io opener' needs flags(N), mode(N) or mode("..."): how 'wrap' opens the file */
#pragma io opener(wrap, path(0), mode(2)) /* expect-error#30: argument numbers go from 1 (the first argument) to 64 */
#pragma io opener(wrap, path(1), mode("q")) /* expect-error#39: 'q' is not an fopen mode: r, w or a, then any of + b x e m c */
#pragma io opener(wrap, file(1), mode(2)) /* expect-error#25: expected path(N), dirfd(N), flags(N), mode(N) or mode("...") (N counts the arguments from 1), not 'file' */
#pragma io opener(wrap, path(1), path(2)) /* expect-error#34: 'path' is given twice */
#pragma io opener(wrap, path(1), mode(1)) /* expect-error#39: argument 1 is the 'path' already */
#pragma io opener(wrapat, path(2), flags(3), mode("w")) /* expect-error#46: give flags(N) or mode(...), not both: they say the same */
#pragma io opener(wrap, path(1), mode(2) x) /* expect-error#42: expected ',' and another argument, or ')' to close 'opener(' */
