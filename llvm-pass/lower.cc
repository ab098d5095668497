/* SPDX-License-Identifier: MIT */
/*
 * lower.cc - signature values as code (docs/design.md §3: "values are
 * integer C expressions evaluated at run time at the call site").
 *
 * A slot expression of the libiosig parser (identifiers, constants, units,
 * + - * / %, unary -, a.b, p->b, a[i], f(x)) becomes a clang expression of
 * type double that is evaluated where the call is.  Names are looked up
 * the way the GCC plugin does: the blocks around the call (declared before
 * it; a lambda or block on the way must capture what it uses), the
 * function's parameters, the members of *this in a C++ member function,
 * then the enclosing classes, namespaces and the file.  A file-scope
 * pragma is evaluated where it is written.
 *
 * Arithmetic follows the parser's constant folding (sig_eval.c), like the
 * GCC plugin's lower.cc, so that both compilers compute the same double
 * for the same value: integer semantics while both operands are integers
 * (a division truncates, '%' needs integers), floating otherwise; x*ms is
 * x/1000.  Integer division and remainder are marker calls that the pass
 * expands (the operands are needed twice, which is simpler on IR).
 */
#include "iosig-clang.h"

#include <cmath>

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

namespace cp {

/* ---- small AST helpers ---------------------------------------------- */

static clang::ASTContext &ctx()
{
	return *tu().ctx;
}

clang::Expr *make_cast(clang::Expr *e, clang::QualType type, clang::CastKind kind)
{
	return clang::ImplicitCastExpr::Create(ctx(), type, kind, e, nullptr, clang::VK_PRValue,
					       clang::FPOptionsOverride());
}

clang::Expr *make_rvalue(clang::Expr *e)
{
	clang::QualType t = e->getType();

	if (t->isArrayType())
		return make_cast(e, ctx().getArrayDecayedType(t), clang::CK_ArrayToPointerDecay);
	if (t->isFunctionType())
		return make_cast(e, ctx().getPointerType(t), clang::CK_FunctionToPointerDecay);
	if (!e->isGLValue())
		return e;
	return make_cast(e, t.getUnqualifiedType(), clang::CK_LValueToRValue);
}

clang::Expr *make_double(double d, clang::SourceLocation loc)
{
	return clang::FloatingLiteral::Create(ctx(), llvm::APFloat(d), true, ctx().DoubleTy, loc);
}

clang::Expr *make_uint(uint64_t v, clang::QualType type, clang::SourceLocation loc)
{
	return clang::IntegerLiteral::Create(ctx(), llvm::APInt((unsigned)ctx().getIntWidth(type), v),
					     type, loc);
}

clang::Expr *make_string(llvm::StringRef s, clang::SourceLocation loc)
{
	clang::ASTContext &c = ctx();
	clang::QualType arr = c.getStringLiteralArrayType(c.CharTy, s.size());
	clang::Expr *lit = clang::StringLiteral::Create(c, s, kOrdinaryString, false, arr, loc);
	clang::Expr *ptr = make_cast(lit, c.getArrayDecayedType(arr), clang::CK_ArrayToPointerDecay);
	clang::QualType cstr = c.getPointerType(c.CharTy.withConst());

	if (!c.hasSameType(ptr->getType(), cstr))
		ptr = make_cast(ptr, cstr, clang::CK_NoOp);
	return ptr;
}

clang::Expr *make_call(clang::FunctionDecl *fd, llvm::ArrayRef<clang::Expr *> args,
		       clang::SourceLocation loc)
{
	clang::ASTContext &c = ctx();
	clang::ExprValueKind vk = tu().cxx ? clang::VK_LValue : clang::VK_PRValue;
	clang::Expr *ref = clang::DeclRefExpr::Create(c, clang::NestedNameSpecifierLoc(),
						      clang::SourceLocation(), fd, false, loc,
						      fd->getType(), vk);
	clang::Expr *callee = make_cast(ref, c.getPointerType(fd->getType()),
					clang::CK_FunctionToPointerDecay);
	clang::QualType ret = fd->getReturnType();

	return clang::CallExpr::Create(c, callee, args, ret.getNonReferenceType(),
				       ret->isLValueReferenceType() ? clang::VK_LValue
				       : ret->isRValueReferenceType() ? clang::VK_XValue
								      : clang::VK_PRValue,
				       loc, clang::FPOptionsOverride());
}

/* ---- the lowering ------------------------------------------------------ */

namespace {

/* A lowered (sub)expression. */
struct Val {
	clang::Expr *e = nullptr; /* the expression */
	bool num = false;         /* e is a double computed by the signature's arithmetic;
				     otherwise e is a C value of its own type */
	bool is_int = false;      /* num: integer semantics */
	double recip = 0;         /* a unit (ms, ppm) that is exactly 1/recip, else 0 */
};

/* What a name is where the value is evaluated. */
struct Found {
	clang::NamedDecl *decl = nullptr;
	bool overloaded = false;       /* several functions of that name */
	bool enclosing = false;        /* a variable captured by the lambda or block */
	bool not_captured = false;     /* a local of an enclosing function, not captured */
	bool member = false;           /* a data member of *this */
	bool this_not_captured = false;
};

class Lowerer {
public:
	Lowerer(const Pragma &p, const LookupScope &sc) : p_(p), sc_(sc) {}

	bool lower(const iosig_expr *e, Val &ret);
	bool number(const iosig_expr *e, const Val &v, clang::Expr *&ret, bool &ret_int);

private:
	std::string q(const iosig_expr *e) const { return "'" + expr_text(p_, e) + "'"; }
	void error(const iosig_expr *e, const std::string &msg) const
	{
		clang::SourceRange r = expr_range(p_, e);
		report(Level::Error, r.getBegin(), msg, r);
	}
	clang::SourceLocation loc() const { return sc_.at; }

	Found lookup(const iosig_expr *e);
	void lookup_local(clang::IdentifierInfo *id, Found &f);
	bool lookup_context(clang::DeclContext *dc, clang::IdentifierInfo *id, Found &f);
	const clang::CXXMethodDecl *this_method() const;
	const clang::LambdaExpr *innermost_lambda() const;
	clang::Expr *this_expr(bool implicit);
	clang::Expr *member_of(clang::Expr *base, bool arrow, clang::ValueDecl *member);
	clang::Expr *decl_ref(clang::ValueDecl *d, bool enclosing);

	bool lower_ident(const iosig_expr *e, Val &ret, bool callee);
	bool lower_arith(const iosig_expr *e, Val &ret);
	bool lower_member(const iosig_expr *e, Val &ret);
	bool lower_index(const iosig_expr *e, Val &ret);
	bool lower_call(const iosig_expr *e, Val &ret);
	bool argument(const iosig_expr *e, const Val &v, clang::QualType type, clang::Expr *&ret);

	const Pragma &p_;
	const LookupScope &sc_;
};

} // namespace

/* ---- names -------------------------------------------------------------- */

/* A statement with its labels taken off. */
static clang::Stmt *unlabel(clang::Stmt *s)
{
	for (;;) {
		if (auto *l = llvm::dyn_cast<clang::LabelStmt>(s))
			s = l->getSubStmt();
		else if (auto *c = llvm::dyn_cast<clang::SwitchCase>(s))
			s = c->getSubStmt();
		else if (auto *a = llvm::dyn_cast<clang::AttributedStmt>(s))
			s = a->getSubStmt();
		else
			return s;
	}
}

static bool before(clang::SourceLocation a, clang::SourceLocation b)
{
	const clang::SourceManager &sm = ctx().getSourceManager();

	if (a.isInvalid() || b.isInvalid())
		return true;
	return sm.isBeforeInTranslationUnit(a, b);
}

/* Declarations named id in DeclStmt ds (all of them, or only those
 * declared before `at`); the last one wins. */
static void scan_decl_stmt(clang::DeclStmt *ds, clang::IdentifierInfo *id, bool only_before,
			   clang::SourceLocation at, clang::NamedDecl *&ret)
{
	for (clang::Decl *d : ds->decls()) {
		if (only_before && !before(d->getLocation(), at))
			continue;
		if (auto *nd = llvm::dyn_cast<clang::NamedDecl>(d)) {
			if (nd->getIdentifier() == id &&
			    nd->isInIdentifierNamespace(clang::Decl::IDNS_Ordinary | clang::Decl::IDNS_Type))
				ret = nd;
		}
		/* The enumerators of a local enum are in the block's scope. */
		if (auto *ed = llvm::dyn_cast<clang::EnumDecl>(d))
			for (clang::EnumConstantDecl *ec : ed->enumerators())
				if (ec->getIdentifier() == id)
					ret = ec;
	}
}

static void scan_stmt_decls(clang::Stmt *s, clang::IdentifierInfo *id, clang::SourceLocation at,
			    clang::NamedDecl *&ret)
{
	if (auto *ds = llvm::dyn_cast_or_null<clang::DeclStmt>(s))
		scan_decl_stmt(ds, id, true, at, ret);
}

static void scan_var(clang::VarDecl *v, clang::IdentifierInfo *id, clang::NamedDecl *&ret)
{
	if (v && v->getIdentifier() == id)
		ret = v;
}

/* The lambda's captures hold v. */
static bool lambda_captures(const clang::LambdaExpr *le, const clang::ValueDecl *v)
{
	for (const clang::LambdaCapture &c : le->captures())
		if (c.capturesVariable() && c.getCapturedVar() == v)
			return true;
	return false;
}

static bool captures_this(const clang::LambdaExpr *le)
{
	for (const clang::LambdaCapture &c : le->captures())
		if (c.capturesThis())
			return true;
	return false;
}

void Lowerer::lookup_local(clang::IdentifierInfo *id, Found &f)
{
	llvm::ArrayRef<clang::Stmt *> path = sc_.path;
	const clang::Stmt *crossed = nullptr; /* innermost lambda or block crossed */

	auto found = [&](clang::NamedDecl *d) {
		f.decl = d;
		auto *v = llvm::dyn_cast<clang::VarDecl>(d);
		if (!crossed || !v || !v->hasLocalStorage())
			return;
		if (auto *le = llvm::dyn_cast<clang::LambdaExpr>(crossed)) {
			if (lambda_captures(le, v))
				f.enclosing = true;
			else if (!v->isUsableInConstantExpressions(ctx()))
				f.not_captured = true;
		} else if (auto *be = llvm::dyn_cast<clang::BlockExpr>(crossed)) {
			if (be->getBlockDecl()->capturesVariable(v))
				f.enclosing = true;
			else
				f.not_captured = true;
		}
	};

	for (size_t i = path.size(); i-- > 0;) {
		clang::Stmt *s = path[i];
		clang::Stmt *child = i + 1 < path.size() ? path[i + 1] : nullptr;
		clang::NamedDecl *d = nullptr;

		if (auto *cs = llvm::dyn_cast<clang::CompoundStmt>(s)) {
			for (clang::Stmt *c : cs->body()) {
				if (c == child) {
					scan_stmt_decls(unlabel(c), id, sc_.at, d);
					break;
				}
				if (auto *ds = llvm::dyn_cast<clang::DeclStmt>(unlabel(c)))
					scan_decl_stmt(ds, id, false, sc_.at, d);
			}
		} else if (auto *ds = llvm::dyn_cast<clang::DeclStmt>(s)) {
			scan_decl_stmt(ds, id, true, sc_.at, d);
		} else if (auto *fs = llvm::dyn_cast<clang::ForStmt>(s)) {
			if (child != fs->getInit())
				scan_stmt_decls(fs->getInit(), id, sc_.at, d);
			scan_var(fs->getConditionVariable(), id, d);
		} else if (auto *is = llvm::dyn_cast<clang::IfStmt>(s)) {
			if (child != is->getInit())
				scan_stmt_decls(is->getInit(), id, sc_.at, d);
			scan_var(is->getConditionVariable(), id, d);
		} else if (auto *ss = llvm::dyn_cast<clang::SwitchStmt>(s)) {
			if (child != ss->getInit())
				scan_stmt_decls(ss->getInit(), id, sc_.at, d);
			scan_var(ss->getConditionVariable(), id, d);
		} else if (auto *ws = llvm::dyn_cast<clang::WhileStmt>(s)) {
			scan_var(ws->getConditionVariable(), id, d);
		} else if (auto *rs = llvm::dyn_cast<clang::CXXForRangeStmt>(s)) {
			if (child == rs->getBody())
				scan_var(rs->getLoopVariable(), id, d);
		} else if (auto *cs = llvm::dyn_cast<clang::CXXCatchStmt>(s)) {
			if (child == cs->getHandlerBlock())
				scan_var(cs->getExceptionDecl(), id, d);
		} else if (auto *le = llvm::dyn_cast<clang::LambdaExpr>(s)) {
			for (clang::ParmVarDecl *pv : le->getCallOperator()->parameters())
				scan_var(pv, id, d);
			if (!d && !crossed)
				crossed = le;
		} else if (auto *be = llvm::dyn_cast<clang::BlockExpr>(s)) {
			for (clang::ParmVarDecl *pv : be->getBlockDecl()->parameters())
				scan_var(pv, id, d);
			if (!d && !crossed)
				crossed = be;
		}
		if (d) {
			found(d);
			return;
		}
	}
	if (sc_.fn)
		for (clang::ParmVarDecl *pv : sc_.fn->parameters())
			if (pv->getIdentifier() == id) {
				found(pv);
				return;
			}
}

const clang::LambdaExpr *Lowerer::innermost_lambda() const
{
	for (size_t i = sc_.path.size(); i-- > 0;)
		if (auto *le = llvm::dyn_cast<clang::LambdaExpr>(sc_.path[i]))
			return le;
	return nullptr;
}

/* The member function whose *this the value sees, or null. */
const clang::CXXMethodDecl *Lowerer::this_method() const
{
	auto *md = llvm::dyn_cast_or_null<clang::CXXMethodDecl>(sc_.fn);

	if (!md || !md->isInstance() || md->getParent()->isLambda())
		return nullptr;
	return md;
}

clang::Expr *Lowerer::this_expr(bool implicit)
{
	const clang::CXXMethodDecl *md = this_method();

	return new (ctx()) clang::CXXThisExpr(loc(), md->getThisType(), implicit);
}

/* Members of a class (and of the classes around it), namespaces, the file. */
bool Lowerer::lookup_context(clang::DeclContext *dc, clang::IdentifierInfo *id, Found &f)
{
	llvm::SmallVector<clang::NamedDecl *, 4> hits;

	for (clang::NamedDecl *d : dc->lookup(clang::DeclarationName(id))) {
		if (auto *us = llvm::dyn_cast<clang::UsingShadowDecl>(d))
			d = us->getTargetDecl();
		if (!d->isInIdentifierNamespace(clang::Decl::IDNS_Ordinary | clang::Decl::IDNS_Type |
						clang::Decl::IDNS_Member))
			continue;
		if (!tu().cxx && !d->isInIdentifierNamespace(clang::Decl::IDNS_Ordinary))
			continue;
		hits.push_back(d);
	}
	if (hits.empty())
		return false;
	f.decl = hits.front();
	unsigned functions = 0;
	llvm::SmallPtrSet<const clang::Decl *, 4> distinct;
	for (clang::NamedDecl *d : hits)
		if (llvm::isa<clang::FunctionDecl>(d) || llvm::isa<clang::FunctionTemplateDecl>(d))
			functions += distinct.insert(d->getCanonicalDecl()).second;
	f.overloaded = functions > 1;
	return true;
}

Found Lowerer::lookup(const iosig_expr *e)
{
	Found f;
	clang::IdentifierInfo *id = tu().pp->getIdentifierInfo(e->text);

	if (sc_.fn || !sc_.path.empty()) {
		lookup_local(id, f);
		if (f.decl)
			return f;
	}
	/* Members of *this, then of the classes and namespaces around. */
	const clang::CXXMethodDecl *md = this_method();
	clang::DeclContext *dc = sc_.fn ? const_cast<clang::DeclContext *>(sc_.fn->getParent()) : sc_.dc;
	if (md) {
		if (lookup_context(const_cast<clang::CXXRecordDecl *>(md->getParent()), id, f)) {
			if (llvm::isa<clang::FieldDecl>(f.decl) ||
			    llvm::isa<clang::IndirectFieldDecl>(f.decl)) {
				const clang::LambdaExpr *le = innermost_lambda();

				f.member = true;
				f.this_not_captured = le && !captures_this(le);
			}
			return f;
		}
		dc = const_cast<clang::DeclContext *>(md->getParent()->getParent());
	}
	for (; dc; dc = dc->getParent()) {
		/* Locals were looked at above; extern "C" { } and unscoped enums
		 * are transparent: what they declare is in the enclosing context. */
		if (dc->isFunctionOrMethod() || dc->isTransparentContext())
			continue;
		if (lookup_context(dc, id, f))
			return f;
	}
	return f;
}

clang::Expr *Lowerer::decl_ref(clang::ValueDecl *d, bool enclosing)
{
	clang::QualType t = d->getType().getNonReferenceType();
	clang::ExprValueKind vk = clang::VK_LValue;

	if (llvm::isa<clang::EnumConstantDecl>(d))
		vk = clang::VK_PRValue;
	else if (llvm::isa<clang::FunctionDecl>(d) && !tu().cxx)
		vk = clang::VK_PRValue;
	return clang::DeclRefExpr::Create(ctx(), clang::NestedNameSpecifierLoc(),
					  clang::SourceLocation(), d, enclosing, loc(), t, vk);
}

/* base.member or base->member for a field or an anonymous struct's field. */
clang::Expr *Lowerer::member_of(clang::Expr *base, bool arrow, clang::ValueDecl *member)
{
	if (auto *ind = llvm::dyn_cast<clang::IndirectFieldDecl>(member)) {
		for (clang::NamedDecl *n : ind->chain()) {
			base = member_of(base, arrow, llvm::cast<clang::FieldDecl>(n));
			arrow = false;
		}
		return base;
	}
	auto *f = llvm::cast<clang::FieldDecl>(member);
	clang::QualType t = f->getType();
	clang::ExprValueKind vk = arrow ? clang::VK_LValue : base->getValueKind();

	if (t->isReferenceType()) {
		t = t.getNonReferenceType();
		vk = clang::VK_LValue;
	}
	if (arrow)
		base = make_rvalue(base);
	return clang::MemberExpr::CreateImplicit(ctx(), base, arrow, f, t, vk,
						 f->isBitField() ? clang::OK_BitField
								 : clang::OK_Ordinary);
}

/* A constant C++ variable (usable in constant expressions) as its value:
 * no capture and no odr-use needed, as in the GCC plugin's folding. */
static clang::Expr *constant_value(clang::VarDecl *v, clang::SourceLocation loc)
{
	clang::QualType t = v->getType().getNonReferenceType();

	if (!tu().cxx || !t->isIntegralOrEnumerationType() || t.isVolatileQualified() ||
	    !v->isUsableInConstantExpressions(ctx()))
		return nullptr;
	const clang::APValue *val = v->evaluateValue();
	if (!val || !val->isInt())
		return nullptr;
	clang::QualType it = t->isEnumeralType() ? t->castAs<clang::EnumType>()->getDecl()->getIntegerType()
						  : t.getUnqualifiedType();
	if (it.isNull() || it->isBooleanType())
		it = ctx().IntTy;
	llvm::APSInt n = val->getInt();
	return clang::IntegerLiteral::Create(ctx(), n.extOrTrunc(ctx().getIntWidth(it)), it, loc);
}

bool Lowerer::lower_ident(const iosig_expr *e, Val &ret, bool callee)
{
	if (tu().cxx && strcmp(e->text, "this") == 0) {
		if (!this_method()) {
			error(e, "'this' is only available in a member function");
			return false;
		}
		const clang::LambdaExpr *le = innermost_lambda();
		if (le && !captures_this(le)) {
			error(e, "'this' is not captured by the lambda; capture it to use it in a "
				 "signature value");
			return false;
		}
		ret.e = this_expr(false);
		return true;
	}
	Found f = lookup(e);

	if (!f.decl || f.not_captured) {
		if (f.not_captured)
			error(e, q(e) + " is a variable of the enclosing function, which this lambda "
					"does not capture; capture it by name to use it in a signature "
					"value");
		else
			error(e, q(e) + " is not declared where the signature is evaluated");
		if (sc_.fn && sc_.at != p_.loc)
			report(Level::Note, sc_.at, "the signature is evaluated at this call");
		return false;
	}
	if (f.overloaded) {
		error(e, q(e) + " is overloaded; a signature value can only call a function "
				"declared once");
		return false;
	}
	clang::NamedDecl *d = f.decl;
	if (f.member) {
		if (f.this_not_captured) {
			error(e, q(e) + " is a member of *this, which the lambda does not capture; "
					"capture 'this' to use it in a signature value");
			return false;
		}
		ret.e = member_of(this_expr(true), true, llvm::cast<clang::ValueDecl>(d));
		return true;
	}
	if (auto *v = llvm::dyn_cast<clang::VarDecl>(d)) {
		if (clang::Expr *c = constant_value(v, loc())) {
			ret.e = c;
			return true;
		}
		v->setReferenced();
		v->markUsed(ctx());
		ret.e = decl_ref(v, f.enclosing);
		return true;
	}
	if (auto *ec = llvm::dyn_cast<clang::EnumConstantDecl>(d)) {
		ret.e = decl_ref(ec, false);
		return true;
	}
	if (auto *fd = llvm::dyn_cast<clang::FunctionDecl>(d)) {
		if (!callee) {
			error(e, q(e) + " is a function; a signature value can call it");
			return false;
		}
		ret.e = decl_ref(fd, false);
		return true;
	}
	if (llvm::isa<clang::TypeDecl>(d)) {
		error(e, q(e) + " names a type, not a value");
		return false;
	}
	if (llvm::isa<clang::CXXMethodDecl>(d) || llvm::isa<clang::FunctionTemplateDecl>(d)) {
		error(e, q(e) + " cannot be used in a signature value");
		return false;
	}
	error(e, q(e) + " cannot be used in a signature value");
	return false;
}

/* ---- conversions ------------------------------------------------------ */

/* v as a double with its integer-ness; false after an error. */
bool Lowerer::number(const iosig_expr *e, const Val &v, clang::Expr *&ret, bool &ret_int)
{
	if (v.num) {
		ret = v.e;
		ret_int = v.is_int;
		return true;
	}
	clang::Expr *r = make_rvalue(v.e);
	clang::QualType t = r->getType();
	if (t->isIntegralOrEnumerationType()) {
		ret = make_cast(r, ctx().DoubleTy, clang::CK_IntegralToFloating);
		ret_int = true;
		return true;
	}
	if (t->isRealFloatingType()) {
		ret = ctx().hasSameType(t, ctx().DoubleTy)
			      ? r
			      : make_cast(r, ctx().DoubleTy, clang::CK_FloatingCast);
		ret_int = false;
		return true;
	}
	error(e, q(e) + " has type " + type_name(v.e->getType()) + ", which is not a number");
	return false;
}

static clang::Expr *convert_scalar(clang::Expr *r, clang::QualType to)
{
	clang::QualType from = r->getType();
	clang::ASTContext &c = ctx();

	if (c.hasSameUnqualifiedType(from, to))
		return r;
	bool fi = from->isIntegralOrEnumerationType(), ff = from->isRealFloatingType();
	if (to->isBooleanType())
		return make_cast(r, to, ff ? clang::CK_FloatingToBoolean : clang::CK_IntegralToBoolean);
	if (to->isIntegralOrEnumerationType())
		return make_cast(r, to, ff ? clang::CK_FloatingToIntegral : clang::CK_IntegralCast);
	if (fi)
		return make_cast(r, to, clang::CK_IntegralToFloating);
	return make_cast(r, to, clang::CK_FloatingCast);
}

bool Lowerer::argument(const iosig_expr *e, const Val &v, clang::QualType type, clang::Expr *&ret)
{
	clang::ASTContext &c = ctx();

	if (!type.isNull() && (type->isIntegralOrEnumerationType() || type->isRealFloatingType())) {
		if (!v.num) {
			clang::Expr *r = make_rvalue(v.e);

			if (r->getType()->isIntegralOrEnumerationType() ||
			    r->getType()->isRealFloatingType()) {
				ret = convert_scalar(r, type.getUnqualifiedType());
				return true;
			}
		}
		clang::Expr *d;
		bool is_int;
		if (!number(e, v, d, is_int))
			return false;
		ret = convert_scalar(d, type.getUnqualifiedType());
		return true;
	}
	if (!v.num) {
		clang::Expr *r = make_rvalue(v.e);
		clang::QualType at = r->getType();

		if (!type.isNull() && type->isPointerType() && at->isPointerType()) {
			ret = c.hasSameType(at, type) ? r : make_cast(r, type.getUnqualifiedType(), clang::CK_BitCast);
			return true;
		}
		if (type.isNull() && (at->isPointerType() || at->isIntegralOrEnumerationType() ||
				      at->isRealFloatingType())) {
			/* The default argument promotions. */
			if (at->isRealFloatingType() && c.getFloatingTypeOrder(at, c.DoubleTy) < 0)
				r = make_cast(r, c.DoubleTy, clang::CK_FloatingCast);
			else if (at->isIntegralOrEnumerationType() && c.getIntWidth(at) < c.getIntWidth(c.IntTy))
				r = make_cast(r, c.IntTy, clang::CK_IntegralCast);
			ret = r;
			return true;
		}
	} else if (type.isNull()) {
		ret = v.e;
		return true;
	}
	error(e, q(e) + " (type " + type_name(v.num ? c.DoubleTy : v.e->getType()) +
			 ") cannot be passed as an argument of type " +
			 type_name(type.isNull() ? c.VoidTy : type));
	return false;
}

bool Lowerer::lower_arith(const iosig_expr *e, Val &ret)
{
	Val l, r;
	clang::Expr *a, *b = nullptr;
	bool ai, bi = true;
	clang::ASTContext &c = ctx();
	/* Each operation rounded on its own, as the parser folds constants:
	 * no a*b+c contracted into a fused multiply-add. */
	clang::FPOptionsOverride fp;
	fp.setDisallowFPContract();
	auto bin = [&](clang::BinaryOperatorKind op, clang::Expr *x, clang::Expr *y) {
		return clang::BinaryOperator::Create(c, x, y, op, c.DoubleTy, clang::VK_PRValue,
						     clang::OK_Ordinary, loc(), fp);
	};

	if (!lower(e->lhs, l) || !number(e->lhs, l, a, ai))
		return false;
	if (e->kind != IOSIG_EXPR_NEG && (!lower(e->rhs, r) || !number(e->rhs, r, b, bi)))
		return false;
	ret.num = true;
	ret.is_int = ai && bi;
	switch (e->kind) {
	case IOSIG_EXPR_NEG:
		ret.e = clang::UnaryOperator::Create(c, a, clang::UO_Minus, c.DoubleTy,
						     clang::VK_PRValue, clang::OK_Ordinary, loc(),
						     false, clang::FPOptionsOverride());
		break;
	case IOSIG_EXPR_ADD:
		ret.e = bin(clang::BO_Add, a, b);
		break;
	case IOSIG_EXPR_SUB:
		ret.e = bin(clang::BO_Sub, a, b);
		break;
	case IOSIG_EXPR_MUL:
		/* x*ms is x/1000, exactly as the parser folds it. */
		if (r.recip != 0)
			ret.e = bin(clang::BO_Div, a, make_double(r.recip, loc()));
		else if (l.recip != 0)
			ret.e = bin(clang::BO_Div, b, make_double(l.recip, loc()));
		else
			ret.e = bin(clang::BO_Mul, a, b);
		break;
	case IOSIG_EXPR_DIV:
		ret.e = ret.is_int ? build_int_div(a, b, loc()) : bin(clang::BO_Div, a, b);
		break;
	case IOSIG_EXPR_MOD:
		if (!ai || !bi) {
			const iosig_expr *bad = ai ? e->rhs : e->lhs;

			error(bad, q(bad) + " is not an integer; '%' needs integer operands");
			return false;
		}
		ret.e = build_int_mod(a, b, loc());
		break;
	default:
		return false;
	}
	return true;
}

/* ---- designators ------------------------------------------------------- */

bool Lowerer::lower_member(const iosig_expr *e, Val &ret)
{
	Val obj;

	if (!lower(e->lhs, obj))
		return false;
	clang::QualType type = obj.num ? ctx().DoubleTy : obj.e->getType();
	clang::Expr *base = obj.e;
	if (e->arrow) {
		if (obj.num || !type->isPointerType() || !type->getPointeeType()->isRecordType()) {
			error(e->lhs, q(e->lhs) + " is not a pointer to a structure or union (it has "
						  "type " + type_name(type) + "), so '->' cannot be used");
			return false;
		}
		type = type->getPointeeType();
	} else if (obj.num || !type->isRecordType()) {
		if (!obj.num && type->isPointerType() && type->getPointeeType()->isRecordType())
			error(e->lhs, q(e->lhs) + " is a pointer; use '->' to reach its members");
		else
			error(e->lhs, q(e->lhs) + " is not a structure or union (it has type " +
					      type_name(type) + ")");
		return false;
	}
	const clang::RecordDecl *rd = type->getAsRecordDecl();
	if (!rd || !rd->getDefinition()) {
		error(e->lhs, q(e->lhs) + " has incomplete type " + type_name(type));
		return false;
	}
	rd = rd->getDefinition();
	clang::IdentifierInfo *id = tu().pp->getIdentifierInfo(e->text);
	clang::NamedDecl *m = nullptr;
	for (clang::NamedDecl *d : rd->lookup(clang::DeclarationName(id)))
		if (!m || llvm::isa<clang::FieldDecl>(d) || llvm::isa<clang::IndirectFieldDecl>(d))
			m = d;
	if (m && (llvm::isa<clang::FieldDecl>(m) || llvm::isa<clang::IndirectFieldDecl>(m))) {
		ret.e = member_of(base, e->arrow, llvm::cast<clang::ValueDecl>(m));
		return true;
	}
	if (auto *v = llvm::dyn_cast_or_null<clang::VarDecl>(m)) { /* C++ static data member */
		if (clang::Expr *c = constant_value(v, loc())) {
			ret.e = c;
			return true;
		}
		v->setReferenced();
		v->markUsed(ctx());
		ret.e = decl_ref(v, false);
		return true;
	}
	if (m) {
		error(e, q(e) + " is not a data member; member functions and types cannot be used "
				"in a signature value");
		return false;
	}
	error(e, q(e) + ": " + type_name(type) + " has no member named '" + e->text + "'");
	return false;
}

bool Lowerer::lower_index(const iosig_expr *e, Val &ret)
{
	Val base, ix;
	clang::Expr *idx;
	clang::ASTContext &c = ctx();

	if (!lower(e->lhs, base) || !lower(e->rhs, ix))
		return false;
	if (ix.num && ix.is_int) {
		idx = make_cast(ix.e, c.getPointerDiffType(), clang::CK_FloatingToIntegral);
	} else if (!ix.num && make_rvalue(ix.e)->getType()->isIntegralOrEnumerationType()) {
		idx = make_rvalue(ix.e);
	} else {
		error(e->rhs, "array index " + q(e->rhs) + " is not an integer");
		return false;
	}
	clang::QualType type = base.num ? c.DoubleTy : base.e->getType();
	if (!base.num && (type->isArrayType() || type->isPointerType())) {
		clang::QualType elt = type->isArrayType() ? c.getAsArrayType(type)->getElementType()
							  : type->getPointeeType();
		if (type->isPointerType() && (elt->isIncompleteType() || elt->isVoidType())) {
			error(e->lhs, q(e->lhs) + " points to the incomplete type " + type_name(elt));
			return false;
		}
		ret.e = new (c) clang::ArraySubscriptExpr(make_rvalue(base.e), idx, elt,
							  clang::VK_LValue, clang::OK_Ordinary,
							  loc());
		return true;
	}
	error(e->lhs, q(e->lhs) + " is neither an array nor a pointer (it has type " +
			      type_name(type) + ")");
	return false;
}

bool Lowerer::lower_call(const iosig_expr *e, Val &ret)
{
	Val callee;
	clang::ASTContext &c = ctx();

	if (e->lhs->kind == IOSIG_EXPR_IDENT) {
		if (!lower_ident(e->lhs, callee, true))
			return false;
	} else if (!lower(e->lhs, callee)) {
		return false;
	}
	clang::Expr *fn = callee.e;
	const clang::FunctionProtoType *proto = nullptr;
	clang::QualType fntype;
	auto *ref = callee.num ? nullptr : llvm::dyn_cast<clang::DeclRefExpr>(fn);
	auto *fd = ref ? llvm::dyn_cast<clang::FunctionDecl>(ref->getDecl()) : nullptr;

	if (fd) {
		if (llvm::isa<clang::CXXMethodDecl>(fd)) {
			error(e->lhs, q(e->lhs) + " is a member function; signature values can only "
						  "call plain functions");
			return false;
		}
		fntype = fd->getType();
		fd->setReferenced();
		tu().sema->MarkFunctionReferenced(loc(), fd);
	} else if (!callee.num && fn->getType()->isFunctionPointerType()) {
		fntype = fn->getType()->getPointeeType();
	} else if (!callee.num && fn->getType()->isFunctionType()) {
		fntype = fn->getType();
	} else {
		error(e->lhs, q(e->lhs) + " is neither a function nor a pointer to a function");
		return false;
	}
	proto = fntype->getAs<clang::FunctionProtoType>();
	unsigned nparms = proto ? proto->getNumParams() : 0;
	bool variadic = !proto || proto->isVariadic();
	if (e->nargs < nparms || (e->nargs > nparms && !variadic)) {
		error(e->lhs, q(e->lhs) + " takes " + std::to_string(nparms) + " argument" +
				      (nparms == 1 ? "" : "s") + " but the signature passes " +
				      std::to_string(e->nargs));
		return false;
	}
	std::vector<clang::Expr *> args;
	for (unsigned i = 0; i < e->nargs; i++) {
		Val a;
		clang::Expr *arg;
		clang::QualType pt = i < nparms ? proto->getParamType(i) : clang::QualType();

		if (!lower(e->args[i], a) || !argument(e->args[i], a, pt, arg))
			return false;
		args.push_back(arg);
	}
	clang::QualType rt = fntype->castAs<clang::FunctionType>()->getReturnType();
	if (rt->isVoidType()) {
		error(e->lhs, q(e->lhs) + " returns nothing (void), so it has no value");
		return false;
	}
	clang::Expr *fptr = make_rvalue(fn);
	ret.e = clang::CallExpr::Create(c, fptr, args, rt.getNonReferenceType(),
					rt->isLValueReferenceType() ? clang::VK_LValue
					: rt->isRValueReferenceType() ? clang::VK_XValue
								      : clang::VK_PRValue,
					loc(), clang::FPOptionsOverride());
	return true;
}

/* ---- the expression walk ------------------------------------------------ */

bool Lowerer::lower(const iosig_expr *e, Val &ret)
{
	ret = Val();
	switch (e->kind) {
	case IOSIG_EXPR_INT:
		ret.num = true;
		ret.is_int = e->u.i <= (uint64_t)INT64_MAX;
		ret.e = make_double((double)e->u.i, loc());
		return true;
	case IOSIG_EXPR_FLOAT:
	case IOSIG_EXPR_STRING:
		ret.num = true;
		ret.e = make_double(e->u.f, loc());
		return true;
	case IOSIG_EXPR_UNIT:
		/* As sigp_leaf_num(): whole units are integers; a unit that
		 * is an exact reciprocal (ms, ppm) multiplies by division. */
		ret.num = true;
		ret.is_int = e->u.f == (double)(int64_t)e->u.f;
		if (!ret.is_int && e->u.f > 0) {
			double inv = 1 / e->u.f;

			if (inv == (double)(int64_t)(inv + 0.5))
				ret.recip = inv;
		}
		ret.e = make_double(e->u.f, loc());
		return true;
	case IOSIG_EXPR_IDENT:
		return lower_ident(e, ret, false);
	case IOSIG_EXPR_NEG:
	case IOSIG_EXPR_ADD:
	case IOSIG_EXPR_SUB:
	case IOSIG_EXPR_MUL:
	case IOSIG_EXPR_DIV:
	case IOSIG_EXPR_MOD:
		return lower_arith(e, ret);
	case IOSIG_EXPR_MEMBER:
		return lower_member(e, ret);
	case IOSIG_EXPR_INDEX:
		return lower_index(e, ret);
	case IOSIG_EXPR_CALL:
		return lower_call(e, ret);
	case IOSIG_EXPR_SLOT:
		break;
	}
	error(e, q(e) + " cannot be used in a signature value");
	return false;
}

clang::Expr *lower_slot(const Pragma &p, unsigned slot, const LookupScope &scope)
{
	Lowerer lw(p, scope);
	const iosig_expr *e = p.slots[slot];
	Val v;
	clang::Expr *t;
	bool is_int;

	if (!lw.lower(e, v) || !lw.number(e, v, t, is_int))
		return nullptr;
	return t;
}

} // namespace cp
