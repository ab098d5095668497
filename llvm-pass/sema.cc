/* SPDX-License-Identifier: MIT */
/*
 * sema.cc - a pragma in its scope (docs/design.md §3).
 *
 * The marker the pragma handler leaves (pragma.cc) names an identifier no
 * declaration has; Sema asks its external sources about such names, and
 * the one here answers with a constant and, the first time, resolves the
 * pragma where the marker is: in the function (or lambda, or block) whose
 * body it is in, or at file scope.  Named signatures live in a registry
 * per scope: one for the file and one per function, whose parent is the
 * registry of the enclosing function, or the file's.
 *
 * Values are evaluated at the call (lower.cc); here the variables they
 * name are only marked used, so that a variable read by a pragma alone
 * draws no -Wunused warning.  A name that is declared only after the
 * pragma is looked up again with every token the parser reads, until the
 * declaration appears or the function ends.
 */
#include "iosig-clang.h"

#include "clang/Sema/Lookup.h"
#include "clang/Sema/ScopeInfo.h"
#include "clang/Sema/Scope.h"

namespace cp {

/* A scope with named signatures. */
struct RegScope {
	RegScope *parent = nullptr;
	iosig_registry *reg = nullptr;
	std::vector<const Pragma *> defs; /* the sigdefs, for locations in messages */

	~RegScope() { iosig_registry_free(reg); }
};

/* A name a value uses that was not declared yet where the pragma is. */
struct PendingName {
	clang::IdentifierInfo *name;
	const clang::DeclContext *fn;
};

/* Per translation unit (sema_reset). */
struct SemaState {
	/* Every scope, parents before their children; freed in reverse. */
	std::vector<std::unique_ptr<RegScope>> scopes;
	RegScope *file = nullptr;
	llvm::DenseMap<const clang::Decl *, RegScope *> fns;
	std::vector<PendingName> pending;

	~SemaState()
	{
		while (!scopes.empty())
			scopes.pop_back();
	}
};

static std::unique_ptr<SemaState> state;

static SemaState &st()
{
	if (!state)
		state.reset(new SemaState);
	return *state;
}

void sema_reset()
{
	state.reset();
}

static RegScope *new_scope(RegScope *parent)
{
	std::unique_ptr<RegScope> s(new RegScope);

	s->parent = parent;
	s->reg = iosig_registry_new(parent ? parent->reg : nullptr);
	if (!s->reg) {
		fputs("iosig: out of memory\n", stderr);
		abort();
	}
	st().scopes.push_back(std::move(s));
	return st().scopes.back().get();
}

/* The function-like declaration (function, lambda call operator, block)
 * whose body context is, or null at file, namespace or class scope. */
static const clang::Decl *function_of(const clang::DeclContext *ctx)
{
	if (!ctx || !ctx->isFunctionOrMethod())
		return nullptr;
	return clang::Decl::castFromDeclContext(ctx)->getCanonicalDecl();
}

/* The registry scope of fn (null: file scope), created on first use.  A
 * function nested in another (lambda, block, local class) sees the
 * definitions of the enclosing function. */
static RegScope *scope_of(const clang::Decl *fn)
{
	SemaState &s = st();

	if (!s.file)
		s.file = new_scope(nullptr);
	if (!fn)
		return s.file;
	auto it = s.fns.find(fn);
	if (it != s.fns.end())
		return it->second;
	RegScope *parent = scope_of(function_of(fn->getParentFunctionOrMethod()));
	RegScope *r = new_scope(parent);
	s.fns[fn] = r;
	return r;
}

/* The sigdef named `name` visible from scope s. */
static const Pragma *find_def(const RegScope *s, const char *name)
{
	for (; s; s = s->parent)
		for (const Pragma *d : s->defs)
			if (d->parsed->name && strcmp(d->parsed->name, name) == 0)
				return d;
	return nullptr;
}

/* ---- marking names used ------------------------------------------------- */

static void mark_decl(clang::NamedDecl *d)
{
	clang::Sema &s = *tu().sema;

	d->setReferenced();
	auto *vd = llvm::dyn_cast<clang::VarDecl>(d);
	if (!vd || !vd->hasLocalStorage())
		return;
	/* -Wunused-but-set-variable counts reads minus assignments. */
	s.RefsMinusAssignments[vd]++;
	/* -Wunused-lambda-capture: a lambda (being parsed) that captures the
	 * variable uses it.  A capture is never added here: a value can only
	 * use what the lambda captures anyway (lower.cc). */
	for (clang::sema::FunctionScopeInfo *fsi : s.FunctionScopes)
		if (auto *lsi = llvm::dyn_cast<clang::sema::LambdaScopeInfo>(fsi))
			if (lsi->isCaptured(vd))
				lsi->getCapture(vd).markUsed(/*IsODRUse=*/true);
}

/* Looks `name` up in Sema's scope sc; marks what it finds.  False if
 * nothing of that name is visible there. */
static bool mark_name(clang::IdentifierInfo *name, clang::Scope *sc)
{
	clang::Sema &s = *tu().sema;
	clang::LookupResult r(s, clang::DeclarationName(name), clang::SourceLocation(),
			      clang::Sema::LookupOrdinaryName);

	if (!sc || !s.LookupName(r, sc))
		return false;
	for (clang::NamedDecl *d : r)
		if (llvm::isa<clang::VarDecl>(d) || llvm::isa<clang::FunctionDecl>(d))
			mark_decl(d);
	return true;
}

static void mark_expr(const iosig_expr *e, clang::Scope *sc, const clang::DeclContext *fn)
{
	if (!e)
		return;
	if (e->kind == IOSIG_EXPR_IDENT) {
		clang::IdentifierInfo *name = tu().pp->getIdentifierInfo(e->text);

		if (strcmp(e->text, "this") != 0 && !mark_name(name, sc) && fn) {
			st().pending.push_back(PendingName{ name, fn });
			if (tu().cxx)
				tu().pp->setTokenWatcher(watch_token);
		}
		return;
	}
	mark_expr(e->lhs, sc, fn);
	if (e->kind != IOSIG_EXPR_MEMBER)
		mark_expr(e->rhs, sc, fn);
	for (unsigned i = 0; i < e->nargs; i++)
		mark_expr(e->args[i], sc, fn);
}

/* The function-like context Sema is in now. */
static const clang::DeclContext *current_function()
{
	const clang::DeclContext *dc = tu().sema ? tu().sema->CurContext : nullptr;

	return dc && dc->isFunctionOrMethod() ? dc : nullptr;
}

void watch_token(const clang::Token &tok)
{
	Tu &t = tu();

	t.last_token = tok.getKind();
	if (!state || state->pending.empty() || !t.sema)
		return;
	std::vector<PendingName> &pending = state->pending;
	const clang::DeclContext *fn = current_function();
	for (size_t i = 0; i < pending.size();) {
		if (pending[i].fn != fn && !(fn && pending[i].fn->Encloses(fn))) {
			pending.erase(pending.begin() + (long)i); /* its function ended */
			continue;
		}
		if (mark_name(pending[i].name, t.sema->getCurScope()))
			pending.erase(pending.begin() + (long)i);
		else
			i++;
	}
}

/* ---- canonical text ---------------------------------------------------- */

static bool canonicalize(Pragma &p, const iosig_pragma *pr, clang::Scope *sc)
{
	size_t size = 256;
	int r;

	for (;;) {
		p.canon.assign(size, '\0');
		r = iosig_pragma_canonical(pr, &p.canon[0], size, p.slots, IOSIG_P_COUNT, &p.nslots);
		if (r != -ENOSPC || size >= 4 * 65536)
			break;
		size *= 2;
	}
	if (r < 0) {
		report(Level::Error, diag_loc(p.loc),
		       std::string("cannot build the canonical text of this '") + plugin_kind_name(p.kind) +
			       "' (" + strerror(-r) + ")");
		return false;
	}
	p.canon.resize(strlen(p.canon.c_str()));
	for (unsigned i = 0; i < p.nslots; i++)
		mark_expr(p.slots[i], sc, current_function());
	return true;
}

/* ---- the kinds ---------------------------------------------------------- */

static void handle_sigdef(Pragma &p, RegScope *scope)
{
	iosig_error err = {};
	int r = iosig_registry_define(scope->reg, p.parsed, &err);

	if (r == -EEXIST) {
		const Pragma *old = find_def(scope, p.parsed->name);

		report_parser_error(p, err);
		if (old)
			report(Level::Note, diag_loc(old->loc),
			       std::string("'") + p.parsed->name + "' was defined here");
		return;
	}
	if (r < 0) {
		report_parser_error(p, err);
		return;
	}
	scope->defs.push_back(&p);
	p.ok = true;
}

/* A file-scope jobwide: values evaluated where it is written, by a
 * constructor that runs before main. */
static void file_jobwide(Pragma &p)
{
	std::vector<clang::Expr *> values;
	LookupScope scope;

	if (foreign_errors())
		return; /* no code will be generated */
	scope.dc = p.dc;
	scope.at = p.loc;
	for (unsigned i = 0; i < p.nslots; i++) {
		clang::Expr *v = lower_slot(p, i, scope);

		if (!v)
			return;
		values.push_back(v);
	}
	add_jobwide_constructor(p, values);
	p.nbound++;
	if (opts.verbose)
		report(Level::Info, diag_loc(p.loc),
		       "'#pragma io jobwide' at file scope runs before 'main' (constructor)");
}

/* ---- openers ------------------------------------------------------------ */

const Opener *opener_of(const clang::FunctionDecl *fd, clang::SourceLocation at)
{
	const clang::SourceManager &sm = tu().ctx->getSourceManager();

	fd = fd->getCanonicalDecl();
	for (const Opener &o : tu().openers)
		if (o.fn == fd && (at.isInvalid() || !sm.isBeforeInTranslationUnit(
							   sm.getExpansionLoc(at),
							   sm.getExpansionLoc(o.loc))))
			return &o;
	return nullptr;
}

static bool char_pointer(clang::QualType t)
{
	return t->isPointerType() && t->getPointeeType()->isCharType();
}

/* Checks the declaration of the opener against what the pragma says; false
 * after reporting an error. */
static bool check_opener(const Pragma &p, const plugin_opener &o, const clang::FunctionDecl *fd)
{
	clang::SourceRange at = span_range(p, o.name_off, o.name_len);
	const auto *proto = fd->getType()->getAs<clang::FunctionProtoType>();
	std::string name = "'" + std::string(o.name) + "'";

	if (llvm::isa<clang::CXXMethodDecl>(fd)) {
		report(Level::Error, at.getBegin(), name + " is a member function; an opener must be a "
			"function that is not a member", at);
		return false;
	}
	if (supported_function(fd)) {
		report(Level::Error, at.getBegin(), name + " is a supported call already: '#pragma io "
			"sig' describes it without a declaration", at);
		return false;
	}
	if (!proto) {
		report(Level::Error, at.getBegin(), name + " has no prototype; declare its parameters "
			"before '#pragma io opener'", at);
		return false;
	}
	unsigned n = proto->getNumParams();
	for (int k = 0; k < PLUGIN_OPENER_NARGS; k++) {
		unsigned a = o.arg[k];
		clang::SourceRange r = span_range(p, o.arg_off[k], o.arg_len[k]);
		std::string what = std::string(plugin_opener_arg_names[k]) + "(" + std::to_string(a) + ")";

		if (!a)
			continue;
		if (a > n) {
			report(Level::Error, r.getBegin(), name + " has " + std::to_string(n) +
				" parameter" + (n == 1 ? "" : "s") + "; " + what + " names none", r);
			return false;
		}
		clang::QualType t = proto->getParamType(a - 1);
		bool text = k == PLUGIN_OPENER_PATH || k == PLUGIN_OPENER_MODE;
		if (text ? !char_pointer(t) : !t->isIntegralOrEnumerationType()) {
			report(Level::Error, r.getBegin(), what + (text ? " must name a parameter of type "
				"'char *' or 'const char *'" : " must name an integer parameter") +
				"; parameter " + std::to_string(a) + " of " + name + " has type " +
				type_name(t), r);
			return false;
		}
	}
	clang::QualType rt = proto->getReturnType();
	if (!rt->isVoidType() && !rt->isPointerType() && !rt->isIntegralOrEnumerationType()) {
		report(Level::Error, at.getBegin(), "an opener returns a pointer, an integer or "
			"nothing; " + name + " returns " + type_name(rt), at);
		return false;
	}
	return true;
}

/* '#pragma io opener(NAME, path(N), ...)': from here on, calls of NAME are
 * supported calls. */
static void handle_opener(Pragma &p, clang::DeclContext *ctx, clang::Scope *sc)
{
	const plugin_opener &o = p.opener;
	clang::SourceRange at = span_range(p, o.name_off, o.name_len);
	std::string name = "'" + std::string(o.name) + "'";

	if (!tu().sema)
		return; /* nothing is compiled */
	clang::Sema &s = *tu().sema;
	if (function_of(ctx)) {
		report(Level::Error, diag_loc(p.loc), "'#pragma io opener' declares a function of the "
		       "program: write it at file (or namespace) scope, after the declaration of "
		       "the function");
		return;
	}
	clang::LookupResult r(s, clang::DeclarationName(tu().pp->getIdentifierInfo(o.name)),
			      clang::SourceLocation(), clang::Sema::LookupOrdinaryName);
	if (!sc || !s.LookupName(r, sc) || r.empty()) {
		report(Level::Error, at.getBegin(), name + " is not declared here; declare the "
		       "function before '#pragma io opener'", at);
		return;
	}
	auto *fd = r.isSingleResult() ? llvm::dyn_cast<clang::FunctionDecl>(r.getFoundDecl()) : nullptr;
	if (!fd) {
		bool overloaded = r.isOverloadedResult() ||
				  llvm::isa<clang::FunctionTemplateDecl>(r.getRepresentativeDecl());

		report(Level::Error, at.getBegin(), name + (overloaded ? " is overloaded or a template; an "
							    "opener must be a function declared once"
							  : " is not a function"), at);
		return;
	}
	if (!check_opener(p, o, fd))
		return;
	for (const Opener &prev : tu().openers)
		if (prev.fn == fd->getCanonicalDecl()) {
			if (memcmp(prev.o.arg, o.arg, sizeof(o.arg)) || strcmp(prev.o.fmode, o.fmode)) {
				report(Level::Error, diag_loc(p.loc), name + " is an opener already, with "
				       "other arguments");
				report(Level::Note, diag_loc(prev.loc), "declared here");
			}
			return;
		}
	Opener rec;
	rec.fn = fd->getCanonicalDecl();
	rec.o = o;
	rec.loc = p.loc;
	tu().openers.push_back(rec);
	if (opts.verbose)
		report(Level::Info, diag_loc(p.loc), "calls of " + name + " after this are supported "
		       "calls");
}

void process_pragma(Pragma &p, clang::DeclContext *ctx, clang::Scope *sc)
{
	const clang::Decl *fn = function_of(ctx);
	iosig_error err = {};

	p.processed = true;
	p.dc = ctx;
	if (p.is_opener) {
		handle_opener(p, ctx, sc);
		return;
	}
	if (p.kind == IOSIG_PRAGMA_SIGDEF) {
		handle_sigdef(p, scope_of(fn));
		return;
	}
	RegScope *scope = p.kind == IOSIG_PRAGMA_SIG ? scope_of(fn) : nullptr;
	if (scope && p.parsed->name)
		p.def = find_def(scope, p.parsed->name);
	if (iosig_pragma_resolve(scope ? scope->reg : nullptr, p.parsed, &p.resolved, &err) < 0) {
		report_parser_error(p, err);
		return;
	}
	if (!canonicalize(p, p.resolved, sc))
		return;
	p.ok = true;
	if (fn) {
		p.in_function = true;
		tu().any_function_pragma = true;
	} else if (p.kind == IOSIG_PRAGMA_SIG) {
		plugin_unbound_info u = {};

		u.why = PLUGIN_UNBOUND_FILE_SCOPE;
		report_unbound(diag_loc(p.loc), u);
	} else {
		file_jobwide(p);
	}
}

/* ---- the marker names ------------------------------------------------ */

/* The constant a marker names: an enumerator of an anonymous enum that is
 * in no scope, so nothing else finds it. */
static clang::EnumConstantDecl *marker_constant(Pragma &p, clang::DeclarationName name,
						 clang::SourceLocation loc)
{
	Tu &t = tu();
	clang::ASTContext &ctx = *t.ctx;

	if (!t.marker_enum) {
		t.marker_enum = clang::EnumDecl::Create(ctx, ctx.getTranslationUnitDecl(), loc, loc,
							nullptr, nullptr, false, false, false);
		t.marker_enum->setImplicit();
		t.marker_enum->completeDefinition(ctx.IntTy, ctx.IntTy, 0, 0);
	}
	llvm::APSInt one(llvm::APInt(ctx.getIntWidth(ctx.IntTy), 1), false);
	clang::EnumConstantDecl *d = clang::EnumConstantDecl::Create(
		ctx, t.marker_enum, loc, name.getAsIdentifierInfo(), ctx.IntTy, nullptr, one);
	d->setImplicit();
	t.marker_decls[d] = &p;
	return d;
}

class MarkerSource : public clang::ExternalSemaSource {
public:
	bool LookupUnqualified(clang::LookupResult &r, clang::Scope *sc) override
	{
		clang::DeclarationName name = r.getLookupName();

		if (!name.isIdentifier() || !tu().active)
			return false;
		Pragma *p = pragma_by_marker_name(name.getAsIdentifierInfo()->getName());
		if (!p || !p->parsed_ok)
			return false;
		if (!p->marker)
			p->marker = marker_constant(*p, name, r.getNameLoc());
		r.addDecl(p->marker);
		if (!p->processed)
			process_pragma(*p, r.getSema().CurContext, sc);
		return true;
	}
};

clang::ExternalSemaSource *make_marker_source()
{
	return new MarkerSource();
}

} // namespace cp
