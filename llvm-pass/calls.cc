/* SPDX-License-Identifier: MIT */
/*
 * calls.cc - the calls a signature can describe and what they become
 * (docs/design.md §3 and §4, iosig.h "Compiler-generated calls").
 *
 * The front end marks a bound call; the pass (pass.cc) writes the libiosig
 * call and the static site descriptor from the mark.  The marks are calls
 * of functions no program defines:
 *
 *   open(p, f)    -> __iosig_bind_int("canon", "file", line, col, n, v0.., open(p, f))
 *   fopen(p, m)   -> __iosig_bind_ptr(..., fopen(p, m))
 *                    the pass: iosig_open(&site, p, f, 0, v0..) in place of open
 *   std::ofstream s(path, mode) and s.open(path, mode)
 *                 -> the path and the mode are evaluated once, then
 *                    __iosig_prepare_mk(..., "ofstream", path.c_str(), mode, <openmode
 *                    bits>, v0..) runs before the constructor or open()
 *                    the pass: iosig_prepare(&site, AT_FDCWD, path, flags, v0..)
 *   jobwide       -> __iosig_jobwide_mk(..., v0..)   the pass: iosig_jobwide(&site, v0..)
 *   MPI_File_open(c, p, a, i, fh)
 *                 -> __iosig_bind_int(..., MPI_File_open(c, p, a, i, fh))
 *                    the pass: iosig_MPI_File_open(&site, c, p, a, i, fh, v0..)
 *                    (libiosig-mpi, iosig_mpi.h)
 *
 * The values are evaluated before the call's own arguments (clang
 * evaluates arguments left to right), so they dominate the call the pass
 * replaces.  A call is recognised by the declaration it calls, not its
 * spelling: with _FILE_OFFSET_BITS=64 glibc declares fopen with the
 * assembler name fopen64, which is what the program calls.
 */
#include "iosig-clang.h"

#include <fcntl.h>

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"

namespace cp {

const char kBindInt[] = "__iosig_bind_int";
const char kBindPtr[] = "__iosig_bind_ptr";
const char kPrepare[] = "__iosig_prepare_mk";
const char kJobwide[] = "__iosig_jobwide_mk";
const char kOpenerBegin[] = "__iosig_opener_begin_mk";
const char kOpenerDone[] = "__iosig_opener_done_mk";
const char kIntDiv[] = "__iosig_idiv";
const char kIntMod[] = "__iosig_imod";

static const Callee callees[] = {
	{ "open", "iosig_open", Shape::Open, 2, 3, false },
	{ "open64", "iosig_open64", Shape::Open, 2, 3, false },
	{ "openat", "iosig_openat", Shape::OpenAt, 3, 4, false },
	{ "openat64", "iosig_openat", Shape::OpenAt, 3, 4, true },
	{ "creat", "iosig_creat", Shape::Creat, 2, 2, false },
	{ "creat64", "iosig_creat", Shape::Creat, 2, 2, true },
	{ "fopen", "iosig_fopen", Shape::Fopen, 2, 2, false },
	{ "fopen64", "iosig_fopen64", Shape::Fopen, 2, 2, false },
	{ "freopen", "iosig_freopen", Shape::Freopen, 3, 3, false },
	{ "freopen64", "iosig_freopen", Shape::Freopen, 3, 3, true },
	{ "MPI_File_open", "iosig_MPI_File_open", Shape::Mpi, 5, 5, false },
};

/* The C++ streams; `implied` is the openmode bit the class adds. */
static const struct {
	const char *cls;     /* class template in namespace std */
	const char *implied; /* "_S_in", "_S_out" or null */
	const char *ctor;    /* site->call of a constructor */
	const char *open;    /* site->call of open() */
} streams[] = {
	{ "basic_fstream", nullptr, "fstream", "fstream::open" },
	{ "basic_ifstream", "_S_in", "ifstream", "ifstream::open" },
	{ "basic_ofstream", "_S_out", "ofstream", "ofstream::open" },
};

const Callee *find_callee(llvm::StringRef symbol)
{
	for (const Callee &c : callees)
		if (symbol == c.symbol)
			return &c;
	return nullptr;
}

static clang::ASTContext &ctx()
{
	return *tu().ctx;
}

/* ---- recognising calls -------------------------------------------------- */

/* The index in streams[] of std::basic_*fstream rd, or -1. */
static int stream_class(const clang::CXXRecordDecl *rd)
{
	if (!rd || !rd->getIdentifier() || !rd->isInStdNamespace())
		return -1;
	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++)
		if (rd->getName() == streams[i].cls)
			return (int)i;
	return -1;
}

/* The c_str() member function of a string-like class, or null. */
static clang::CXXMethodDecl *c_str_of(clang::QualType type)
{
	const clang::CXXRecordDecl *rd = type->getAsCXXRecordDecl();

	if (!rd || !rd->hasDefinition())
		return nullptr;
	rd = rd->getDefinition();
	for (clang::NamedDecl *d : rd->lookup(clang::DeclarationName(&ctx().Idents.get("c_str"))))
		if (auto *m = llvm::dyn_cast<clang::CXXMethodDecl>(d))
			if (m->getNumParams() == 0 && m->getReturnType()->isPointerType())
				return m;
	return nullptr;
}

/* A stream's path argument: const char *, or a class with c_str()
 * (std::string, std::filesystem::path). */
static bool stream_path_ok(const clang::Expr *arg)
{
	clang::QualType t = arg->getType();

	if (t->isPointerType())
		return t->getPointeeType()->isCharType();
	return c_str_of(t) != nullptr;
}

static bool classify_stream(clang::Expr *e, const clang::CXXRecordDecl *rd, bool ctor,
			    unsigned nargs, const clang::Expr *path, Call *ret)
{
	int i = stream_class(rd);

	if (i < 0 || nargs < 1 || nargs > 2 || !stream_path_ok(path))
		return false;
	ret->expr = e;
	ret->stream = true;
	ret->name = ctor ? streams[i].ctor : streams[i].open;
	ret->loc = e->getBeginLoc();
	return true;
}

/* The C library function fd is, if it is one of the supported ones. */
static const Callee *library_callee(const clang::FunctionDecl *fd)
{
	if (!fd->getIdentifier() || !fd->isExternallyVisible() || (tu().cxx && !fd->isExternC()) ||
	    !fd->getDeclContext()->getRedeclContext()->isTranslationUnit())
		return nullptr;
	/* The library symbol: its declared name, or name64 when glibc
	 * redirects it (_FILE_OFFSET_BITS=64). */
	llvm::StringRef name = fd->getName();
	std::string sym = name.str();
	if (const auto *label = fd->getAttr<clang::AsmLabelAttr>())
		sym = label->getLabel().str();
	for (const Callee &c : callees)
		if (sym == c.symbol && (name == c.symbol || (name.str() + "64") == c.symbol))
			return &c;
	return nullptr;
}

bool classify_call(clang::Stmt *s, Call *ret)
{
	if (auto *ce = llvm::dyn_cast<clang::CXXConstructExpr>(s)) {
		const clang::CXXConstructorDecl *c = ce->getConstructor();

		return ce->getNumArgs() >= 1 &&
		       classify_stream(ce, c->getParent(), true, ce->getNumArgs(), ce->getArg(0), ret);
	}
	if (auto *mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(s)) {
		const clang::CXXMethodDecl *m = mc->getMethodDecl();

		return m && m->getIdentifier() && m->getName() == "open" && mc->getNumArgs() >= 1 &&
		       classify_stream(mc, m->getParent(), false, mc->getNumArgs(), mc->getArg(0),
				       ret);
	}
	auto *call = llvm::dyn_cast<clang::CallExpr>(s);
	if (!call || llvm::isa<clang::CXXOperatorCallExpr>(call) || llvm::isa<clang::CUDAKernelCallExpr>(call))
		return false;
	clang::FunctionDecl *fd = call->getDirectCallee();
	if (!fd || !fd->getIdentifier() || llvm::isa<clang::CXXMethodDecl>(fd))
		return false;
	if (const Callee *c = library_callee(fd)) {
		unsigned n = call->getNumArgs();
		unsigned path = c->shape == Shape::OpenAt || c->shape == Shape::Mpi;
		if (n < c->min_args || n > c->max_args || !call->getArg(path)->getType()->isPointerType())
			return false;
		ret->expr = call;
		ret->callee = c;
		ret->name = c->symbol;
		ret->loc = call->getBeginLoc();
		return true;
	}
	if (const Opener *o = opener_of(fd, call->getBeginLoc())) {
		for (unsigned a : o->o.arg)
			if (a > call->getNumArgs())
				return false;
		ret->expr = call;
		ret->opener = o;
		ret->name = o->o.name;
		ret->loc = call->getBeginLoc();
		return true;
	}
	return false;
}

bool supported_function(const clang::FunctionDecl *fd)
{
	return library_callee(fd) != nullptr;
}

const char *call_replacement(const Call &call)
{
	return call.stream ? "iosig_prepare" : call.opener ? "iosig_opener_begin" : call.callee->entry;
}

/* ---- marker functions -------------------------------------------------- */

/* A function declaration in no scope, called by the rewritten code and
 * removed by the pass: `name` whatever the language (no mangling), no
 * exceptions, no debug information. */
static clang::FunctionDecl *marker_function(const char *name, clang::QualType ret,
					    llvm::ArrayRef<clang::QualType> params, bool variadic)
{
	clang::ASTContext &c = ctx();
	clang::FunctionProtoType::ExtProtoInfo epi;

	epi.Variadic = variadic;
	if (tu().cxx)
		epi.ExceptionSpec.Type = clang::EST_BasicNoexcept;
	clang::QualType ft = c.getFunctionType(ret, params, epi);
	clang::FunctionDecl *fd = clang::FunctionDecl::Create(
		c, c.getTranslationUnitDecl(), clang::SourceLocation(), clang::SourceLocation(),
		clang::DeclarationName(&c.Idents.get(name)), ft, c.getTrivialTypeSourceInfo(ft),
		clang::SC_Extern);
	llvm::SmallVector<clang::ParmVarDecl *, 8> parms;
	for (clang::QualType pt : params) {
		clang::ParmVarDecl *pv = clang::ParmVarDecl::Create(
			c, fd, clang::SourceLocation(), clang::SourceLocation(), nullptr, pt,
			c.getTrivialTypeSourceInfo(pt), clang::SC_None, nullptr);
		pv->setImplicit();
		parms.push_back(pv);
	}
	fd->setParams(parms);
	fd->setImplicit();
	fd->addAttr(clang::AsmLabelAttr::CreateImplicit(c, name));
	fd->addAttr(clang::NoThrowAttr::CreateImplicit(c));
	fd->addAttr(clang::NoDebugAttr::CreateImplicit(c));
	return fd;
}

/* The marker functions of this translation unit, by name and type. */
static llvm::DenseMap<std::pair<const char *, const clang::Type *>, clang::FunctionDecl *> &markers()
{
	static llvm::DenseMap<std::pair<const char *, const clang::Type *>, clang::FunctionDecl *> m;
	static const clang::ASTContext *owner;

	if (owner != tu().ctx) {
		m.clear();
		owner = tu().ctx;
	}
	return m;
}

/* canon, file, line, column, number of values: the start of every site
 * marker's parameters. */
static void site_params(llvm::SmallVectorImpl<clang::QualType> &v)
{
	clang::ASTContext &c = ctx();
	clang::QualType cstr = c.getPointerType(c.CharTy.withConst());

	v.append({ cstr, cstr, c.UnsignedIntTy, c.UnsignedIntTy, c.UnsignedIntTy });
}

static clang::FunctionDecl *get_marker(const char *name, clang::QualType ret)
{
	clang::ASTContext &c = ctx();
	auto key = std::make_pair(name, ret.getCanonicalType().getTypePtr());
	clang::FunctionDecl *&fd = markers()[key];

	if (fd)
		return fd;
	llvm::SmallVector<clang::QualType, 16> params;
	clang::QualType cstr = c.getPointerType(c.CharTy.withConst());
	if (name == kIntDiv || name == kIntMod) {
		params.append({ c.DoubleTy, c.DoubleTy });
		fd = marker_function(name, c.DoubleTy, params, false);
		return fd;
	}
	if (name == kOpenerDone) {
		params.push_back(cstr);
		if (!ret->isVoidType())
			params.push_back(ret);
		fd = marker_function(name, ret, params, false);
		return fd;
	}
	site_params(params);
	if (name == kPrepare)
		params.append({ cstr, cstr, c.IntTy, c.IntTy, c.IntTy, c.IntTy, c.IntTy, c.IntTy });
	else if (name == kOpenerBegin)
		params.append({ cstr, c.IntTy, cstr, c.IntTy, cstr });
	fd = marker_function(name, ret, params, true);
	return fd;
}

/* The site arguments of p: canonical text, file, line, column, count. */
static void site_args(const Pragma &p, unsigned nvalues, llvm::SmallVectorImpl<clang::Expr *> &args)
{
	clang::ASTContext &c = ctx();
	const clang::SourceManager &sm = c.getSourceManager();
	clang::PresumedLoc where = sm.getPresumedLoc(sm.getExpansionLoc(p.loc));
	clang::SourceLocation l = p.loc;

	args.push_back(make_string(p.canon, l));
	args.push_back(make_string(where.isValid() ? where.getFilename() : "", l));
	args.push_back(make_uint(where.isValid() ? where.getLine() : 0, c.UnsignedIntTy, l));
	args.push_back(make_uint(where.isValid() ? where.getColumn() : 0, c.UnsignedIntTy, l));
	args.push_back(make_uint(nvalues, c.UnsignedIntTy, l));
}

clang::Expr *build_int_div(clang::Expr *a, clang::Expr *b, clang::SourceLocation loc)
{
	return make_call(get_marker(kIntDiv, ctx().DoubleTy), { a, b }, loc);
}

clang::Expr *build_int_mod(clang::Expr *a, clang::Expr *b, clang::SourceLocation loc)
{
	return make_call(get_marker(kIntMod, ctx().DoubleTy), { a, b }, loc);
}

/* ---- rewrites ----------------------------------------------------------- */

/* Replaces child `old` of `parent` by `repl`. */
static bool replace_child(clang::Stmt *parent, clang::Stmt *old, clang::Stmt *repl)
{
	if (auto *ds = llvm::dyn_cast<clang::DeclStmt>(parent)) {
		for (clang::Decl *d : ds->decls())
			if (auto *v = llvm::dyn_cast<clang::VarDecl>(d))
				if (v->getInit() == old) {
					v->setInit(llvm::cast<clang::Expr>(repl));
					return true;
				}
		return false;
	}
	for (clang::Stmt *&c : parent->children())
		if (c == old) {
			c = repl;
			return true;
		}
	return false;
}

static bool replace(const Call &call, clang::Expr *repl)
{
	if (replace_child(call.parent, call.expr, repl))
		return true;
	report(Level::Error, call.loc, "iosig cannot rewrite this call of '" + call.name +
					       "' (it is part of a '" +
					       call.parent->getStmtClassName() +
					       "'); please report this as an iosig bug");
	return false;
}

/* The value of enumerator `name` of enum type t, or -1. */
static int64_t openmode_bit(clang::QualType t, const char *name)
{
	const clang::EnumType *et = t->getAs<clang::EnumType>();

	if (!et)
		return -1;
	for (const clang::EnumConstantDecl *e : et->getDecl()->enumerators())
		if (e->getName() == name)
			return e->getInitVal().getExtValue();
	return -1;
}

static bool rewrite_stream(const Pragma &p, Call &call, llvm::ArrayRef<clang::Expr *> values)
{
	clang::ASTContext &c = ctx();
	auto *ctor = llvm::dyn_cast<clang::CXXConstructExpr>(call.expr);
	auto *mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(call.expr);
	unsigned nargs = ctor ? ctor->getNumArgs() : mc->getNumArgs();
	const clang::CXXRecordDecl *cls = ctor ? ctor->getConstructor()->getParent()
					       : mc->getMethodDecl()->getParent();
	static const char *const names[4] = { "_S_in", "_S_out", "_S_trunc", "_S_app" };
	int64_t bits[4], implied = 0;

	if (nargs < 2) {
		report(Level::Error, call.loc, "this call of '" + call.name + "' has no openmode "
					       "argument; iosig cannot tell how it opens the file");
		return false;
	}
	clang::Expr *path = ctor ? ctor->getArg(0) : mc->getArg(0);
	clang::Expr *mode = ctor ? ctor->getArg(1) : mc->getArg(1);
	for (int i = 0; i < 4; i++)
		bits[i] = openmode_bit(mode->getType(), names[i]);
	if (bits[0] < 0 || bits[1] < 0 || bits[2] < 0 || bits[3] < 0) {
		report(Level::Error, call.loc, "cannot read the bits of " + type_name(mode->getType()) +
					       ", which is not the 'std::ios_base::openmode' of "
					       "libstdc++ (the only C++ library iosig supports)");
		return false;
	}
	int si = stream_class(cls);
	if (si >= 0 && streams[si].implied)
		implied = bits[strcmp(streams[si].implied, "_S_in") == 0 ? 0 : 1];

	/* The path and the mode, each evaluated once, feed both the marker
	 * and the stream. */
	auto *ovp = new (c) clang::OpaqueValueExpr(path->getExprLoc(), path->getType(),
						   path->getValueKind(), path->getObjectKind(), path);
	auto *ovm = new (c) clang::OpaqueValueExpr(mode->getExprLoc(), mode->getType(),
						   mode->getValueKind(), mode->getObjectKind(), mode);
	clang::QualType cstr_type = c.getPointerType(c.CharTy.withConst());
	clang::Expr *cstr;
	if (path->getType()->isPointerType()) {
		cstr = make_rvalue(ovp);
		if (!c.hasSameType(cstr->getType(), cstr_type))
			cstr = make_cast(cstr, cstr_type, clang::CK_NoOp);
	} else {
		clang::CXXMethodDecl *m = c_str_of(path->getType());
		clang::Expr *callee = clang::MemberExpr::CreateImplicit(
			c, ovp, false, m, c.BoundMemberTy, clang::VK_PRValue, clang::OK_Ordinary);

		tu().sema->MarkFunctionReferenced(call.loc, m);
		cstr = clang::CXXMemberCallExpr::Create(c, callee, {}, m->getReturnType(),
							clang::VK_PRValue, call.loc,
							clang::FPOptionsOverride());
		if (!c.hasSameType(cstr->getType(), cstr_type))
			cstr = make_cast(cstr, cstr_type, clang::CK_NoOp);
	}
	llvm::SmallVector<clang::Expr *, 24> args;
	site_args(p, (unsigned)values.size(), args);
	args.push_back(make_string(call.name, call.loc));
	args.push_back(cstr);
	args.push_back(make_cast(make_rvalue(ovm), c.IntTy, clang::CK_IntegralCast));
	args.push_back(make_uint((uint64_t)implied, c.IntTy, call.loc));
	for (int i = 0; i < 4; i++)
		args.push_back(make_uint((uint64_t)bits[i], c.IntTy, call.loc));
	args.append(values.begin(), values.end());
	clang::Expr *prepare = make_call(get_marker(kPrepare, c.VoidTy), args, call.loc);

	if (ctor) {
		ctor->setArg(0, ovp);
		ctor->setArg(1, ovm);
	} else {
		mc->setArg(0, ovp);
		mc->setArg(1, ovm);
	}
	clang::Expr *semantics[] = { ovp, ovm, prepare, call.expr };
	clang::Expr *poe = clang::PseudoObjectExpr::Create(c, call.expr, semantics, 3);
	return replace(call, poe);
}

/* e (a pointer) as type t. */
static clang::Expr *pointer_as(clang::Expr *e, clang::QualType t)
{
	e = make_rvalue(e);
	return ctx().hasSameType(e->getType(), t) ? e : make_cast(e, t, clang::CK_BitCast);
}

/*
 * A declared opener: the arguments libiosig reads are evaluated once, then
 * libiosig decides and gives the path the function gets, then the call,
 * then libiosig undoes what the function did not use.  The pass writes
 * iosig_opener_begin() and iosig_opener_end() with one site.
 */
static bool rewrite_opener(const Pragma &p, Call &call, llvm::ArrayRef<clang::Expr *> values)
{
	clang::ASTContext &c = ctx();
	auto *ce = llvm::cast<clang::CallExpr>(call.expr);
	const plugin_opener &o = call.opener->o;
	clang::QualType cstr = c.getPointerType(c.CharTy.withConst());
	clang::OpaqueValueExpr *ov[PLUGIN_OPENER_NARGS] = {};
	llvm::SmallVector<clang::Expr *, 8> semantics;

	for (int k = 0; k < PLUGIN_OPENER_NARGS; k++) {
		if (!o.arg[k])
			continue;
		clang::Expr *a = ce->getArg(o.arg[k] - 1);
		ov[k] = new (c) clang::OpaqueValueExpr(a->getExprLoc(), a->getType(), a->getValueKind(),
						       a->getObjectKind(), a);
		ce->setArg(o.arg[k] - 1, ov[k]);
		semantics.push_back(ov[k]);
	}
	llvm::SmallVector<clang::Expr *, 24> args;
	site_args(p, (unsigned)values.size(), args);
	args.push_back(make_string(call.name, call.loc));
	args.push_back(ov[PLUGIN_OPENER_DIRFD]
			       ? make_cast(make_rvalue(ov[PLUGIN_OPENER_DIRFD]), c.IntTy, clang::CK_IntegralCast)
			       : make_uint((uint64_t)(int64_t)AT_FDCWD, c.IntTy, call.loc));
	args.push_back(pointer_as(ov[PLUGIN_OPENER_PATH], cstr));
	args.push_back(ov[PLUGIN_OPENER_FLAGS]
			       ? make_cast(make_rvalue(ov[PLUGIN_OPENER_FLAGS]), c.IntTy, clang::CK_IntegralCast)
			       : make_uint(0, c.IntTy, call.loc));
	if (ov[PLUGIN_OPENER_MODE])
		args.push_back(pointer_as(ov[PLUGIN_OPENER_MODE], cstr));
	else if (o.fmode[0])
		args.push_back(make_string(o.fmode, call.loc));
	else
		args.push_back(make_cast(make_uint(0, c.IntTy, call.loc), cstr, clang::CK_NullToPointer));
	args.append(values.begin(), values.end());
	clang::Expr *begin = make_call(get_marker(kOpenerBegin, cstr), args, call.loc);
	auto *path = new (c) clang::OpaqueValueExpr(call.loc, cstr, clang::VK_PRValue,
						    clang::OK_Ordinary, begin);
	semantics.push_back(path);
	clang::Expr *orig = ov[PLUGIN_OPENER_PATH];
	ce->setArg(o.arg[PLUGIN_OPENER_PATH] - 1, pointer_as(path, make_rvalue(orig)->getType()));
	clang::QualType ret = ce->getType();
	clang::Expr *poe;
	if (ret->isVoidType()) {
		semantics.push_back(ce);
		semantics.push_back(make_call(get_marker(kOpenerDone, c.VoidTy), { path }, call.loc));
		poe = clang::PseudoObjectExpr::Create(c, ce, semantics,
						      clang::PseudoObjectExpr::NoResult);
	} else {
		clang::Expr *value = make_rvalue(ce);
		semantics.push_back(make_call(get_marker(kOpenerDone, value->getType()),
					      { path, value }, call.loc));
		poe = clang::PseudoObjectExpr::Create(c, ce, semantics, semantics.size() - 1);
	}
	return replace(call, poe);
}

bool rewrite_call(const Pragma &p, Call &call, llvm::ArrayRef<clang::Expr *> values)
{
	clang::ASTContext &c = ctx();

	if (call.stream)
		return rewrite_stream(p, call, values);
	if (call.opener)
		return rewrite_opener(p, call, values);
	clang::QualType ret = call.expr->getType();
	const char *name = ret->isPointerType() ? kBindPtr : kBindInt;
	llvm::SmallVector<clang::Expr *, 24> args;
	site_args(p, (unsigned)values.size(), args);
	args.append(values.begin(), values.end());
	args.push_back(call.expr);
	clang::Expr *mark = make_call(get_marker(name, ret.getUnqualifiedType()), args, call.loc);
	(void)c;
	return replace(call, mark);
}

clang::Expr *build_jobwide(const Pragma &p, llvm::ArrayRef<clang::Expr *> values)
{
	llvm::SmallVector<clang::Expr *, 24> args;

	site_args(p, (unsigned)values.size(), args);
	args.append(values.begin(), values.end());
	return make_call(get_marker(kJobwide, ctx().VoidTy), args, p.loc);
}

void add_jobwide_constructor(const Pragma &p, llvm::ArrayRef<clang::Expr *> values)
{
	clang::ASTContext &c = ctx();
	clang::FunctionProtoType::ExtProtoInfo epi;
	clang::QualType ft = c.getFunctionType(c.VoidTy, {}, epi);
	std::string name = "__iosig_jobwide." + std::to_string(p.id);
	clang::SourceLocation loc = p.loc;
	clang::FunctionDecl *fd = clang::FunctionDecl::Create(
		c, c.getTranslationUnitDecl(), loc, loc,
		clang::DeclarationName(&c.Idents.get(name)), ft, c.getTrivialTypeSourceInfo(ft),
		clang::SC_Static);
	clang::Stmt *body[] = { build_jobwide(p, values) };

	fd->setBody(make_compound(c, body, loc, loc));
	fd->setImplicit();
	fd->addAttr(clang::AsmLabelAttr::CreateImplicit(c, name));
	fd->addAttr(clang::ConstructorAttr::CreateImplicit(c, 65535));
	fd->addAttr(clang::NoDebugAttr::CreateImplicit(c));
	tu().pending_ctors.push_back(fd);
}

} // namespace cp
