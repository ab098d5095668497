/*
 * '#pragma io opener' declares a function of the program: it must be
 * declared before, at file scope, not be a supported call already, have
 * the arguments the pragma names, of the right types, and return a pointer,
 * an integer or nothing (c_opener_diag.c: the syntax).  MPI_File_open (as
 * mpi.h declares it, the handles opaque here) is a supported call too.
 *
 * verify-notes
 */
#include <fcntl.h>
#include <stdio.h>

FILE *wrap(const char *name, const char *mode);
int wrapat(int dirfd, const char *name, int flags, ...);
int old_style();
struct big {
	char x[64];
};
struct big by_value(const char *name);
static int not_a_function;
typedef struct mpi_comm *MPI_Comm;
typedef struct mpi_info *MPI_Info;
typedef struct mpi_file *MPI_File;
int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh);

#pragma io opener(unknown, path(1), mode("w")) /* expect-error#19: 'unknown' is not declared here; declare the function before '#pragma io opener' */
#pragma io opener(not_a_function, path(1), mode("w")) /* expect-error#19: 'not_a_function' is not a function */
#pragma io opener(old_style, path(1), mode("w")) /* expect-error#19: 'old_style' has no prototype; declare its parameters before '#pragma io opener' */
#pragma io opener(wrap, path(1), mode(3)) /* expect-error#34: 'wrap' has 2 parameters; mode(3) names none */
#pragma io opener(wrapat, path(1), flags(3)) /* expect-error#27: path(1) must name a parameter of type 'char *' or 'const char *'; parameter 1 of 'wrapat' has type 'int' */
#pragma io opener(wrapat, dirfd(2), path(2), flags(3)) /* expect-error#42: argument 2 is the 'dirfd' already */
#pragma io opener(wrap, path(1), flags(2)) /* expect-error#34: flags(2) must name an integer parameter; parameter 2 of 'wrap' has type 'const char *' */
#pragma io opener(by_value, path(1), mode("w")) /* expect-error#19: an opener returns a pointer, an integer or nothing; 'by_value' returns 'struct big' */
#pragma io opener(fopen, path(1), mode(2)) /* expect-error#19: 'fopen' is a supported call already: '#pragma io sig' describes it without a declaration */
#pragma io opener(MPI_File_open, path(2), flags(3)) /* expect-error#19: 'MPI_File_open' is a supported call already: '#pragma io sig' describes it without a declaration */

#pragma io opener(wrap, path(1), mode(2))
#pragma io opener(wrap, path(1), mode(2))
#pragma io opener(wrap, path(1), mode("w")) /* expect-error#9: 'wrap' is an opener already, with other arguments */
/* expect-note@-3#9: declared here */

FILE *f(const char *p)
{
#pragma io opener(wrap, path(1), mode(2)) /* expect-error#9: '#pragma io opener' declares a function of the program: write it at file (or namespace) scope, after the declaration of the function */
	return wrap(p, "w");
}

int g(void)
{
	return not_a_function;
}
