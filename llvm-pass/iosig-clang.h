/* SPDX-License-Identifier: MIT */
/*
 * iosig-clang.h - what the files of the clang plugin share (docs/design.md
 * §3 and §4).  Private to llvm-pass/; everything lives in namespace cp.
 *
 * The plugin is one shared object loaded twice by clang: with -fplugin it
 * adds the "#pragma io" handler and an AST consumer to the front end, with
 * -fpass-plugin it adds an LLVM pass.  The front end does what needs the
 * source (parsing, diagnostics, binding a pragma to a call, evaluating the
 * values in the call's scope); the pass does what is easier on IR (the
 * site descriptors, the libiosig calls, the arithmetic helpers).  They
 * meet in marker functions (calls.cc, pass.cc) that never reach the
 * object file.
 *
 *   plugin.cc   registration, options, help, version check, the AST
 *               consumer, diagnostics
 *   pragma.cc   #pragma io: tokens -> text, libiosig parser, the marker
 *               tokens handed back to the parser
 *   sema.cc     the marker's name lookup (in the right scope, also for
 *               late-parsed C++ member functions): registries, resolution,
 *               canonical text, marking the named variables used, file-scope
 *               jobwide
 *   bind.cc     per function body: find the markers, bind each pragma to
 *               the first supported call of the statement after it, rewrite
 *   lower.cc    signature values -> expressions evaluated at the call
 *   calls.cc    supported calls, marker functions, the rewrites
 *   pass.cc     the LLVM pass: markers -> libiosig calls and site descriptors
 */
#ifndef IOSIG_CLANG_PLUGIN_H
#define IOSIG_CLANG_PLUGIN_H

#include <memory>
#include <string>
#include <vector>

#include "compat.h"

#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceLocation.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Sema/Sema.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include "iosig.h"
#include "plugin_shared.h"

namespace cp {

/* ---- options (plugin.cc) ---- */

/* What an unbound pragma (no supported call follows it) gets. */
enum class Unbound { Ignore, Warning, Error };

struct Options {
	bool verbose = false;               /* a note per pragma: what it bound to */
	Unbound unbound = Unbound::Warning; /* unbound=error|warning|ignore */
};

extern Options opts;

/* ---- diagnostics (plugin.cc) ---- */

/* Note: attached to the error or warning before it; Info: a note of its
 * own (verbose output), like GCC's inform(). */
enum class Level { Error, Warning, Note, Info };

/* Reports msg at loc through clang's diagnostics engine. */
void report(Level level, clang::SourceLocation loc, const std::string &msg,
	    clang::SourceRange range = clang::SourceRange());
/* Error or warning for an unbound pragma according to opts.unbound (and
 * -w, -Werror). */
void report_unbound(clang::SourceLocation loc, const plugin_unbound_info &u);
/* "'T'" for a type, as in the GCC plugin's messages. */
std::string type_name(clang::QualType type);
/* False, after saying so once, when the pass half of the plugin will not
 * run (no -fpass-plugin, or -disable-llvm-passes) although code is
 * generated: the rewritten calls need it. */
bool check_pass_loaded(clang::SourceLocation loc);
/* True after errors of the compiler itself (not the plugin's own): code
 * around pragmas may be broken; nothing is lowered, unbound pragmas are not
 * reported on top. */
bool foreign_errors();

/* ---- pragmas (pragma.cc, sema.cc) ---- */

/* One token of a pragma: its span in the parser's text and its place. */
struct Span {
	uint32_t off;
	uint32_t len;
	clang::SourceLocation loc;
};

/* One #pragma io, recorded when the preprocessor meets it. */
struct Pragma {
	unsigned id = 0;                    /* index in the table, in the marker's name */
	iosig_pragma_kind kind = IOSIG_PRAGMA_SIG;
	clang::SourceLocation loc;          /* the "io" token */
	bool parsed_ok = false;             /* the text parsed */
	bool is_opener = false;             /* '#pragma io opener', parsed into opener */
	plugin_opener opener = {};
	bool processed = false;             /* resolved in its scope (sema.cc) */
	bool ok = false;                    /* parsed and resolved without error */
	bool in_function = false;           /* in a function body (marker in the AST) */
	bool seen = false;                  /* its marker was found in a body */
	unsigned nbound = 0;                /* calls it was bound to (template instances) */
	bool reported = false;              /* its unbound diagnostic was given */
	std::string text;                   /* what the parser read: "sig size_per_io(n)" */
	std::vector<Span> spans;            /* one per token, in text order */
	iosig_pragma *parsed = nullptr;     /* as written */
	iosig_pragma *resolved = nullptr;   /* with its definition merged */
	const Pragma *def = nullptr;        /* sig with name(): the sigdef used */
	std::string canon;                  /* canonical text with $N for slots */
	const iosig_expr *slots[IOSIG_P_COUNT] = {}; /* slot N's expression */
	unsigned nslots = 0;
	clang::EnumConstantDecl *marker = nullptr; /* what the marker names */
	clang::DeclContext *dc = nullptr;   /* where it was written (file-scope lookups) */

	Pragma() = default;
	Pragma(const Pragma &) = delete;
	Pragma &operator=(const Pragma &) = delete;
	~Pragma();
};

/* Where bytes [off, off+len) of p's text are in the source. */
clang::SourceRange span_range(const Pragma &p, uint32_t off, uint32_t len);
/* Where an expression of p (a slot or a node below it) is. */
clang::SourceRange expr_range(const Pragma &p, const iosig_expr *e);
/* The source text of expression e of p, for messages. */
std::string expr_text(const Pragma &p, const iosig_expr *e);
/* The location a diagnostic about a token at loc is given at: where it was
 * spelt when that is a real file (a macro definition), else where it was
 * expanded. */
clang::SourceLocation diag_loc(clang::SourceLocation loc);
/* Reports a libiosig error about p at the position it names. */
void report_parser_error(const Pragma &p, const iosig_error &err);

/* pragma.cc: the "io" pragma handler (registered by plugin.cc). */
clang::PragmaHandler *make_pragma_handler();

/* The pragma a marker constant stands for, or null. */
Pragma *pragma_of_marker(const clang::Decl *d);
/* The pragma whose marker name is `name` ("__iosig_pragma_N"), or null. */
Pragma *pragma_by_marker_name(llvm::StringRef name);
/* The pragma whose marker typedef is named `name` ("__iosig_marker_N"). */
Pragma *pragma_by_typedef_name(llvm::StringRef name);

/* sema.cc: resolves p in the scope `ctx` it is written in (with Sema's scope
 * `scope` for marking names used; may be null). */
void process_pragma(Pragma &p, clang::DeclContext *ctx, clang::Scope *scope);
/* sema.cc: an external Sema source that resolves marker names. */
clang::ExternalSemaSource *make_marker_source();
/* sema.cc: called for every token the parser gets: marks variables
 * declared after a pragma that names them. */
void watch_token(const clang::Token &tok);
/* sema.cc: forgets the registries and pending names of a translation unit. */
void sema_reset();

/* A function declared with '#pragma io opener': its calls are supported
 * calls from the pragma on. */
struct Opener {
	const clang::FunctionDecl *fn = nullptr;  /* the canonical declaration */
	plugin_opener o = {};
	clang::SourceLocation loc;                /* the pragma */
};

/* The opener declaration of fd in force at `at` (a call), or null. */
const Opener *opener_of(const clang::FunctionDecl *fd, clang::SourceLocation at);

/* ---- per translation unit (plugin.cc) ---- */

struct Tu {
	bool active = false;                  /* an AST consumer exists (not -E) */
	clang::CompilerInstance *ci = nullptr;
	clang::ASTContext *ctx = nullptr;
	clang::Sema *sema = nullptr;
	clang::Preprocessor *pp = nullptr;
	bool cxx = false;
	bool pass_loaded = false;             /* -fpass-plugin names this plugin */
	bool pass_warned = false;
	clang::tok::TokenKind last_token = clang::tok::unknown; /* before a pragma */
	std::vector<std::unique_ptr<Pragma>> pragmas;
	bool any_function_pragma = false;
	bool source_added = false;            /* the marker source is in Sema */
	clang::EnumDecl *marker_enum = nullptr;
	llvm::DenseMap<const clang::Decl *, Pragma *> marker_decls;
	std::vector<clang::FunctionDecl *> pending_ctors; /* file-scope jobwide */
	std::vector<Opener> openers;          /* '#pragma io opener', in source order */
	bool dispatching = false;             /* handing pending_ctors to CodeGen */
	unsigned own_errors = 0;              /* errors the plugin reported */
};

Tu &tu();

/* ---- lowering (lower.cc) ---- */

/*
 * Where the names of a value are looked up: the statements from the
 * outermost function body down to the point (innermost last; lambda and
 * block expressions on the way are crossed), the function, and for file
 * scope the declaration context.  `at` is the call (or the pragma).
 */
struct LookupScope {
	const clang::FunctionDecl *fn = nullptr;   /* the outermost function, null at file scope */
	llvm::ArrayRef<clang::Stmt *> path;
	clang::SourceLocation at;
	clang::DeclContext *dc = nullptr;          /* file scope */
};

/* The value of slot `slot` of p as a double expression evaluated in
 * `scope`; null after reporting an error. */
clang::Expr *lower_slot(const Pragma &p, unsigned slot, const LookupScope &scope);

/* ---- calls (calls.cc) ---- */

/* How the arguments of a supported C call are laid out. */
enum class Shape {
	Open,    /* path, flags[, mode] */
	OpenAt,  /* dirfd, path, flags[, mode] */
	Creat,   /* path, mode */
	Fopen,   /* path, mode string */
	Freopen, /* path, mode string, stream */
	Mpi,     /* MPI_File_open: comm, path, amode, info, fh */
};

/* A supported C library function and its libiosig replacement. */
struct Callee {
	const char *symbol;  /* the C library symbol called */
	const char *entry;   /* the libiosig replacement */
	Shape shape;
	unsigned min_args, max_args;
	bool lfs_alias;      /* a ...64 symbol without its own libiosig entry: the same
				function as the plain one where off_t has 64 bits */
};

/* The supported function whose symbol is `symbol`, or null. */
const Callee *find_callee(llvm::StringRef symbol);

/* Names of the marker functions shared by the front end and the pass. */
extern const char kBindInt[];     /* T (canon, file, line, col, n, values..., call) */
extern const char kBindPtr[];
extern const char kPrepare[];     /* void (canon, file, line, col, n, callname, path,
				     mode, implied, in, out, trunc, app, values...) */
extern const char kJobwide[];     /* void (canon, file, line, col, n, values...) */
extern const char kOpenerBegin[]; /* const char * (canon, file, line, col, n, callname,
				     dirfd, path, flags, fmode, values...) */
extern const char kOpenerDone[];  /* T (begin, T): the opener's call with its result,
				     void (begin) for a function returning nothing */
extern const char kIntDiv[];      /* double (double, double) */
extern const char kIntMod[];

/* A supported call found in a function body. */
struct Call {
	clang::Expr *expr = nullptr;       /* CallExpr, CXXConstructExpr or CXXMemberCallExpr */
	clang::Stmt *parent = nullptr;     /* where expr is a child */
	const Callee *callee = nullptr;    /* C calls */
	const Opener *opener = nullptr;    /* a declared opener */
	bool stream = false;               /* a C++ stream constructor or open() */
	std::string name;                  /* "open64", "ofstream", "ifstream::open" */
	clang::SourceLocation loc;
};

/* If s is a call of a supported function, describes it in *ret. */
bool classify_call(clang::Stmt *s, Call *ret);
/* True if fd is one of the supported C library functions. */
bool supported_function(const clang::FunctionDecl *fd);
/* The libiosig function the call becomes ("iosig_open"), or the one
 * called before it ("iosig_prepare"). */
const char *call_replacement(const Call &call);
/* Rewrites the call so that the pass turns it into the libiosig call with
 * p's site and values.  False after reporting an error. */
bool rewrite_call(const Pragma &p, Call &call, llvm::ArrayRef<clang::Expr *> values);
/* The statement that calls iosig_jobwide for p with its values. */
clang::Expr *build_jobwide(const Pragma &p, llvm::ArrayRef<clang::Expr *> values);
/* A file-scope jobwide: a constructor function, handed to CodeGen later. */
void add_jobwide_constructor(const Pragma &p, llvm::ArrayRef<clang::Expr *> values);
/* Marker helpers of lower.cc: a / b and a % b with C's integer semantics
 * on doubles (the pass writes the arithmetic). */
clang::Expr *build_int_div(clang::Expr *a, clang::Expr *b, clang::SourceLocation loc);
clang::Expr *build_int_mod(clang::Expr *a, clang::Expr *b, clang::SourceLocation loc);

/* ---- small AST helpers (lower.cc) ---- */

clang::Expr *make_cast(clang::Expr *e, clang::QualType type, clang::CastKind kind);
/* e as an rvalue: loads from lvalues, decays arrays and functions. */
clang::Expr *make_rvalue(clang::Expr *e);
clang::Expr *make_double(double d, clang::SourceLocation loc);
clang::Expr *make_uint(uint64_t v, clang::QualType type, clang::SourceLocation loc);
clang::Expr *make_string(llvm::StringRef s, clang::SourceLocation loc);
/* A call of fd with args (already converted to its parameter types). */
clang::Expr *make_call(clang::FunctionDecl *fd, llvm::ArrayRef<clang::Expr *> args,
		       clang::SourceLocation loc);

/* ---- binding (bind.cc) ---- */

/* Binds and rewrites the pragmas in every function body of d. */
void bind_decl(clang::Decl *d);
/* End of the translation unit: pragmas whose marker was lost. */
void bind_finish();

} // namespace cp

#endif /* IOSIG_CLANG_PLUGIN_H */
