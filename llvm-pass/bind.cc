/* SPDX-License-Identifier: MIT */
/*
 * bind.cc - binding pragmas to calls (docs/design.md §3: a pragma
 * describes the first supported call in the statement right after it, and
 * no call of a later statement).
 *
 * Runs for every function body when the parser has finished it, before
 * CodeGen sees it (the plugin's consumer comes first); for a C++ template
 * once per instantiation.  It finds the marker statements pragma.cc left,
 * and for each one searches the statement after it in its block, in source
 * order and into nested expressions, blocks, loops and conditionals, for
 * the first supported call, noting the other calls it meets for the
 * message of an unbound pragma.  The search stops at the next pragma it
 * meets; it does not enter lambdas, blocks or local classes, which are
 * functions of their own.  Then
 * every bound call is rewritten (calls.cc) with its values lowered at the
 * call (lower.cc), and the markers are replaced by empty statements (or,
 * for jobwide, by the call of iosig_jobwide).  This is the same algorithm,
 * with the same messages, as the GCC plugin's bind.cc.
 */
#include "iosig-clang.h"

#include "clang/AST/StmtCXX.h"
#include "llvm/ADT/DenseSet.h"

namespace cp {

namespace {

struct Marker {
	Pragma *p = nullptr;
	clang::Stmt *stmt = nullptr;            /* the marker statement */
	clang::Stmt *holder = nullptr;          /* where stmt is a child (block or label) */
	clang::CompoundStmt *list = nullptr;    /* its block, null if not directly in one */
	unsigned index = 0;                     /* the position in list of what holds it */
	const clang::FunctionDecl *fn = nullptr;/* the outermost function */
	std::vector<clang::Stmt *> path;        /* from the body down to the marker */
	Call call;
	std::vector<clang::Stmt *> call_path;   /* from the body down to the call */
	bool bound = false;                     /* call is the call it describes */
	plugin_unbound_info why = {};           /* otherwise, why not */
	std::vector<std::string> names;         /* storage of why.names[], why.macros[] */
	bool first_call_seen = false;
	std::vector<clang::Expr *> values;
	bool lowered = false;
	bool applied = false;
};

} // namespace

/* Bodies done, so that each is bound once. */
static llvm::DenseSet<const clang::Stmt *> &done()
{
	static llvm::DenseSet<const clang::Stmt *> s;
	static const clang::ASTContext *owner;

	if (owner != tu().ctx) {
		s.clear();
		owner = tu().ctx;
	}
	return s;
}

/* The pragma whose marker s is, or null. */
static Pragma *marker_of(const clang::Stmt *s)
{
	const clang::Expr *e = nullptr;

	if (!s)
		return nullptr;
	if (auto *ds = llvm::dyn_cast<clang::DeclStmt>(s)) {
		if (!ds->isSingleDecl())
			return nullptr;
		if (auto *sa = llvm::dyn_cast<clang::StaticAssertDecl>(ds->getSingleDecl()))
			e = sa->getAssertExpr();
		if (auto *td = llvm::dyn_cast<clang::TypedefDecl>(ds->getSingleDecl())) {
			Pragma *p = td->getIdentifier() ? pragma_by_typedef_name(td->getName()) : nullptr;

			return p && p->ok && p->in_function && p->marker ? p : nullptr;
		}
	} else if (auto *ce = llvm::dyn_cast<clang::CStyleCastExpr>(s)) {
		if (ce->getCastKind() == clang::CK_ToVoid)
			e = ce->getSubExpr();
	}
	if (!e)
		return nullptr;
	auto *ref = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
	Pragma *p = ref ? pragma_of_marker(ref->getDecl()) : nullptr;
	return p && p->ok && p->in_function ? p : nullptr;
}

static bool is_label(const clang::Stmt *s)
{
	return llvm::isa<clang::LabelStmt>(s) || llvm::isa<clang::SwitchCase>(s) ||
	       llvm::isa<clang::AttributedStmt>(s);
}

/* ---- collecting markers ------------------------------------------------- */

class Collector {
public:
	explicit Collector(const clang::FunctionDecl *fn) : fn_(fn) {}

	void walk(clang::Stmt *s);
	std::vector<Marker> markers;
	/* Local classes: their member functions are bound on their own. */
	std::vector<clang::CXXRecordDecl *> local_classes;

private:
	void add(Pragma *p, clang::Stmt *s);
	void walk_decl(clang::Decl *d);

	const clang::FunctionDecl *fn_;
	std::vector<clang::Stmt *> stack_;
};

void Collector::add(Pragma *p, clang::Stmt *s)
{
	Marker m;

	m.p = p;
	m.stmt = s;
	m.fn = fn_;
	m.path = stack_;
	m.path.push_back(s);
	m.holder = stack_.empty() ? nullptr : stack_.back();
	/* Through labels up to the block. */
	size_t k = stack_.size();
	clang::Stmt *child = s;
	while (k > 0 && is_label(stack_[k - 1]))
		child = stack_[--k];
	if (k > 0)
		if (auto *cs = llvm::dyn_cast<clang::CompoundStmt>(stack_[k - 1])) {
			m.list = cs;
			unsigned i = 0;
			for (clang::Stmt *c : cs->body()) {
				if (c == child)
					m.index = i;
				i++;
			}
		}
	p->seen = true;
	markers.push_back(std::move(m));
}

void Collector::walk_decl(clang::Decl *d)
{
	if (auto *v = llvm::dyn_cast<clang::VarDecl>(d)) {
		if (v->getInit())
			walk(v->getInit());
	} else if (auto *rd = llvm::dyn_cast<clang::CXXRecordDecl>(d)) {
		local_classes.push_back(rd);
	}
}

void Collector::walk(clang::Stmt *s)
{
	if (!s)
		return;
	if (Pragma *p = marker_of(s)) {
		add(p, s);
		return;
	}
	stack_.push_back(s);
	if (auto *le = llvm::dyn_cast<clang::LambdaExpr>(s)) {
		for (clang::Expr *init : le->capture_inits())
			walk(init);
		/* A generic lambda's body is a template: its instances are
		 * bound when they are instantiated. */
		if (!le->getCallOperator()->isDependentContext())
			walk(le->getBody());
	} else if (auto *be = llvm::dyn_cast<clang::BlockExpr>(s)) {
		walk(be->getBody());
	} else if (auto *ds = llvm::dyn_cast<clang::DeclStmt>(s)) {
		for (clang::Decl *d : ds->decls())
			walk_decl(d);
	} else {
		for (clang::Stmt *c : s->children())
			walk(c);
	}
	stack_.pop_back();
}

/* ---- searching the call ---------------------------------------------- */

static unsigned presumed_line(clang::SourceLocation loc)
{
	const clang::SourceManager &sm = tu().ctx->getSourceManager();
	clang::PresumedLoc pl = sm.getPresumedLoc(sm.getExpansionLoc(loc));

	return pl.isValid() ? pl.getLine() : 0;
}

/* The macro whose expansion spelt the start of e, or "". */
static std::string macro_of(const clang::Expr *e)
{
	const clang::SourceManager &sm = tu().ctx->getSourceManager();
	clang::SourceLocation loc = e->getBeginLoc();

	if (!loc.isMacroID())
		return "";
	return clang::Lexer::getImmediateMacroName(loc, sm, tu().ctx->getLangOpts()).str();
}

class Searcher {
public:
	explicit Searcher(Marker &m) : m_(m) {}

	/* The first supported call or pragma in s, in source order; true if
	 * found (a pragma in blocked_by). */
	bool search(clang::Stmt *s);

	std::vector<clang::Stmt *> stack;
	const Pragma *blocked_by = nullptr;

private:
	void note_other_call(const clang::CallExpr *call);

	Marker &m_;
};

/* Records a call that is not a supported one: what the unbound message
 * names.  Calls the program does not write by name (built-ins, operators,
 * member functions, which cannot be openers) are not named. */
void Searcher::note_other_call(const clang::CallExpr *call)
{
	plugin_unbound_info &u = m_.why;
	const clang::FunctionDecl *fd = call->getDirectCallee();

	if (llvm::isa<clang::CXXOperatorCallExpr>(call) || llvm::isa<clang::CXXMemberCallExpr>(call) ||
	    llvm::isa<clang::UserDefinedLiteral>(call))
		return;
	if (fd && (fd->getBuiltinID() || fd->isImplicit() || !fd->getIdentifier() ||
		   llvm::isa<clang::CXXMethodDecl>(fd)))
		return;
	if (!m_.first_call_seen) {
		m_.first_call_seen = true;
		u.line = presumed_line(call->getBeginLoc());
		if (!fd) {
			u.why = PLUGIN_UNBOUND_INDIRECT;
			m_.names.push_back(macro_of(call));
			return;
		}
		u.why = PLUGIN_UNBOUND_UNSUPPORTED;
	}
	if (!fd || u.why != PLUGIN_UNBOUND_UNSUPPORTED)
		return;
	std::string name = fd->getName().str();
	for (unsigned i = 0; i < u.nnames && i < PLUGIN_UNBOUND_NAMES; i++)
		if (m_.names[2 * i] == name)
			return;
	if (u.nnames < PLUGIN_UNBOUND_NAMES) {
		m_.names.push_back(name);
		m_.names.push_back(macro_of(call));
	}
	u.nnames++;
}

bool Searcher::search(clang::Stmt *s)
{
	if (!s)
		return false;
	/* Another pragma first, even in a nested block: the call is not this
	 * one's. */
	if (const Pragma *q = marker_of(s)) {
		blocked_by = q;
		return true;
	}
	/* Other functions, unevaluated operands. */
	if (llvm::isa<clang::LambdaExpr>(s) || llvm::isa<clang::BlockExpr>(s) ||
	    llvm::isa<clang::UnaryExprOrTypeTraitExpr>(s) || llvm::isa<clang::CXXNoexceptExpr>(s) ||
	    llvm::isa<clang::BinaryConditionalOperator>(s))
		return false;
	if (classify_call(s, &m_.call)) {
		m_.call.parent = stack.empty() ? nullptr : stack.back();
		m_.call_path = stack;
		m_.call_path.push_back(s);
		return true;
	}
	if (auto *call = llvm::dyn_cast<clang::CallExpr>(s))
		note_other_call(call);
	stack.push_back(s);
	bool found = false;
	if (auto *ds = llvm::dyn_cast<clang::DeclStmt>(s)) {
		/* The initialisers run at the declarations, in order; a static
		 * local's runs once, not here. */
		for (clang::Decl *d : ds->decls()) {
			auto *v = llvm::dyn_cast<clang::VarDecl>(d);
			if (v && v->getInit() && !v->isStaticLocal() && search(v->getInit())) {
				found = true;
				break;
			}
		}
	} else {
		for (clang::Stmt *c : s->children())
			if (search(c)) {
				found = true;
				break;
			}
	}
	if (!found)
		stack.pop_back();
	return found;
}

/* Finds the call of m: the first supported call in the statement after it
 * in its block (in evaluation order: the outer call before its arguments,
 * a condition before its branches). */
static void search_call(Marker &m)
{
	m.why = plugin_unbound_info();
	m.why.why = PLUGIN_UNBOUND_END;
	if (!m.list)
		return;
	unsigned i = 0;
	for (clang::Stmt *c : m.list->body()) {
		if (i++ <= m.index)
			continue;
		Searcher s(m);
		/* The path down to the block, then into the statement. */
		s.stack.assign(m.path.begin(), m.path.end() - 1);
		while (!s.stack.empty() && s.stack.back() != m.list)
			s.stack.pop_back();
		if (!s.search(c)) {
			if (m.why.why == PLUGIN_UNBOUND_END)
				m.why.why = PLUGIN_UNBOUND_NO_CALL;
		} else if (s.blocked_by) {
			m.why.why = PLUGIN_UNBOUND_BLOCKED;
			m.why.line = presumed_line(s.blocked_by->loc);
		} else {
			m.bound = true;
		}
		break;
	}
	/* The names live in m.names; the message takes pointers. */
	if (m.why.why == PLUGIN_UNBOUND_INDIRECT) {
		m.why.macro = m.names[0].empty() ? nullptr : m.names[0].c_str();
	} else if (m.why.why == PLUGIN_UNBOUND_UNSUPPORTED) {
		for (unsigned k = 0; k < m.why.nnames && k < PLUGIN_UNBOUND_NAMES; k++) {
			m.why.names[k] = m.names[2 * k].c_str();
			m.why.macros[k] = m.names[2 * k + 1].empty() ? nullptr
								   : m.names[2 * k + 1].c_str();
		}
	}
}

/* ---- diagnostics ---------------------------------------------------------- */

static void note_bound(const Marker &m)
{
	std::string line = std::to_string(presumed_line(m.call.loc));
	clang::SourceLocation at = diag_loc(m.p->loc);

	if (m.call.opener)
		report(Level::Info, at, "'#pragma io sig' describes the call of '" + m.call.name +
						"' on line " + line + " (an opener); "
						"'iosig_opener_begin' and 'iosig_opener_end' are "
						"called around it");
	else if (m.call.stream)
		report(Level::Info, at, "'#pragma io sig' describes the call of '" + m.call.name +
						"' on line " + line + "; 'iosig_prepare' is called "
						"before it");
	else
		report(Level::Info, at, "'#pragma io sig' describes the call of '" + m.call.name +
						"' on line " + line + ", which becomes a call of '" +
						call_replacement(m.call) + "'");
}

/* ---- applying ---------------------------------------------------------- */

/* Lowers the values of m where they are evaluated: at the call, or for
 * jobwide at the pragma.  Errors are reported in source order. */
static void lower_marker(Marker &m)
{
	Pragma &p = *m.p;
	LookupScope sc;
	bool ok = true;

	sc.fn = m.fn;
	if (p.kind == IOSIG_PRAGMA_JOBWIDE) {
		sc.path = m.path;
		sc.at = p.loc;
	} else if (m.bound) {
		sc.path = m.call_path;
		sc.at = m.call.loc;
	} else {
		return;
	}
	for (unsigned i = 0; i < p.nslots; i++) {
		clang::Expr *v = lower_slot(p, i, sc);

		ok &= v != nullptr;
		m.values.push_back(v);
	}
	m.lowered = ok;
}

/* Replaces the marker statement by `repl` where it is. */
static void replace_marker(Marker &m, clang::Stmt *repl)
{
	if (!m.holder)
		return;
	for (clang::Stmt *&c : m.holder->children())
		if (c == m.stmt) {
			c = repl;
			return;
		}
}

/* Rewrites the call of m and replaces its marker. */
static void apply(Marker &m)
{
	Pragma &p = *m.p;
	clang::ASTContext &c = *tu().ctx;
	clang::Stmt *repl = new (c) clang::NullStmt(p.loc, /*hasLeadingEmptyMacro=*/true);

	if (!m.list) {
		report(Level::Error, diag_loc(p.loc),
		       std::string("'") + plugin_kind_name(p.kind) + "' is not allowed here; write it on its "
		       "own line in a block, right before the statement with the call");
	} else if (p.kind == IOSIG_PRAGMA_JOBWIDE && m.lowered) {
		if (check_pass_loaded(diag_loc(p.loc))) {
			repl = build_jobwide(p, m.values);
			m.applied = true;
		}
	} else if (m.bound && m.lowered) {
		if (check_pass_loaded(diag_loc(p.loc)))
			m.applied = rewrite_call(p, m.call, m.values);
	}
	replace_marker(m, repl);
}

/* The notes and warnings about m, in source order. */
static void diagnose(Marker &m)
{
	Pragma &p = *m.p;

	if (m.applied) {
		p.nbound++;
		if (!opts.verbose)
			return;
		if (p.kind == IOSIG_PRAGMA_JOBWIDE)
			report(Level::Info, diag_loc(p.loc),
			       "'#pragma io jobwide' becomes a call of 'iosig_jobwide' here");
		else
			note_bound(m);
	} else if (p.kind == IOSIG_PRAGMA_SIG && m.list && !m.bound && !p.nbound &&
		   !p.reported && !foreign_errors()) {
		/* Once, not once per template instantiation. */
		report_unbound(diag_loc(p.loc), m.why);
		p.reported = true;
	}
}

/* Binds the pragmas of one function body (with the lambdas in it). */
static void bind_body(const clang::FunctionDecl *fn, clang::Stmt *body)
{
	if (!body || !done().insert(body).second)
		return;
	Collector col(fn);
	/* A constructor's member initialisers come first (a statement
	 * expression there may hold a pragma, as GCC sees it too). */
	if (const auto *ctor = llvm::dyn_cast<clang::CXXConstructorDecl>(fn))
		for (const clang::CXXCtorInitializer *init : ctor->inits())
			if (init->isWritten())
				col.walk(init->getInit());
	col.walk(body);
	std::vector<Marker> &ms = col.markers;

	for (Marker &m : ms)
		if (m.p->kind == IOSIG_PRAGMA_SIG)
			search_call(m);
	/* Two pragmas reaching one call cannot happen (the search of the
	 * earlier stops at the later); should it, the call is still rewritten
	 * once: the later (nearer) one wins. */
	for (size_t i = 0; i < ms.size(); i++) {
		if (!ms[i].bound)
			continue;
		for (size_t j = i + 1; j < ms.size(); j++)
			if (ms[j].bound && ms[j].call.expr == ms[i].call.expr) {
				ms[i].bound = false;
				ms[i].why = plugin_unbound_info();
				ms[i].why.why = PLUGIN_UNBOUND_TAKEN;
				ms[i].why.line = presumed_line(ms[j].p->loc);
				break;
			}
	}
	/* After an error of the front end no code is generated: only say what
	 * binds, do not build code from what may be erroneous. */
	if (!foreign_errors())
		for (Marker &m : ms)
			lower_marker(m);
	for (size_t i = ms.size(); i-- > 0;)
		apply(ms[i]);
	for (Marker &m : ms)
		diagnose(m);
	for (clang::CXXRecordDecl *rd : col.local_classes)
		bind_decl(rd);
}

/* Lambdas in an initialiser at namespace or class scope. */
static void bind_lambdas(clang::Stmt *s)
{
	if (!s)
		return;
	if (auto *le = llvm::dyn_cast<clang::LambdaExpr>(s)) {
		if (!le->getCallOperator()->isDependentContext())
			bind_body(le->getCallOperator(), le->getBody());
		return;
	}
	for (clang::Stmt *c : s->children())
		bind_lambdas(c);
}

void bind_decl(clang::Decl *d)
{
	if (!d || d->isInvalidDecl())
		return;
	if (auto *fd = llvm::dyn_cast<clang::FunctionDecl>(d)) {
		if (fd->doesThisDeclarationHaveABody() && !fd->isDependentContext())
			bind_body(fd, fd->getBody());
		return;
	}
	if (auto *vd = llvm::dyn_cast<clang::VarDecl>(d)) {
		if (!vd->getDeclContext()->isDependentContext())
			bind_lambdas(vd->getInit());
		return;
	}
	if (llvm::isa<clang::FunctionTemplateDecl>(d) || llvm::isa<clang::ClassTemplateDecl>(d) ||
	    llvm::isa<clang::ClassTemplatePartialSpecializationDecl>(d))
		return;
	if (auto *rd = llvm::dyn_cast<clang::CXXRecordDecl>(d))
		if (rd->isDependentContext())
			return;
	if (auto *dc = llvm::dyn_cast<clang::DeclContext>(d))
		for (clang::Decl *inner : dc->decls())
			bind_decl(inner);
}

void bind_finish()
{
	Tu &t = tu();

	/* Every function-scope pragma of C has been seen by now (C has no
	 * templates); in C++ an unseen one is in a template that was never
	 * instantiated, which generates no code. */
	if (t.cxx || t.ci->getDiagnostics().hasErrorOccurred())
		return;
	for (const std::unique_ptr<Pragma> &p : t.pragmas)
		if (p->ok && p->in_function && !p->seen)
			report(Level::Error, diag_loc(p->loc),
			       std::string("'") + plugin_kind_name(p->kind) +
				       "' was not found in the function body; it was not applied "
				       "(please report this as an iosig bug)");
}

} // namespace cp
