/* SPDX-License-Identifier: MIT */
/*
 * pragma.cc - "#pragma io ..." in the preprocessor (docs/design.md §3).
 *
 * The handler of the "io" namespace reads the pragma's tokens with macro
 * expansion, turns them back into text (keeping each token's location) and
 * parses it with libiosig.  A pragma handler runs in the preprocessor, a
 * token ahead of the parser, so it cannot tell by itself which function
 * it is in - and for a C++ member function defined in its class it runs
 * while the body is only being stored for later.  So it hands the parser a
 * marker that names the pragma:
 *
 *   C++11:  static_assert(__iosig_pragma_N, "");  (valid in a block, a class
 *                                                  and a namespace)
 *   C++98 and C at the start of a block:
 *           typedef char __iosig_marker_N[__iosig_pragma_N] __attribute__((__unused__));
 *           (a declaration: in C89 the block's declarations may follow)
 *   C:      (void)__iosig_pragma_N;               (a statement: may follow a label)
 *
 * Sema looks the name up where the marker is parsed, which is the right
 * scope; sema.cc answers that lookup and resolves the pragma there.  The
 * marker stays in the body as a statement until bind.cc replaces it (it
 * never generates code).  C has no late-parsed bodies, so at file scope
 * the pragma is resolved here directly; the token before the pragma tells
 * a pragma right after a function's closing brace from one inside it.
 *
 * With -E nothing is compiled: the pragma is written back as _Pragma("io
 * ...") so that compiling the preprocessed output means the same.
 */
#include "iosig-clang.h"

#include <cstdio>
#include <cstring>

#include "clang/Basic/SourceManager.h"
#include "clang/Lex/LiteralSupport.h"
#include "clang/Lex/Pragma.h"
#include "clang/Sema/Scope.h"

namespace cp {

/* Longest pragma text accepted; the parser takes at most 64 KiB. */
static constexpr size_t kMaxText = 65536;
static const char kMarkerPrefix[] = "__iosig_pragma_";
static const char kTypedefPrefix[] = "__iosig_marker_";

Pragma::~Pragma()
{
	iosig_pragma_free(parsed);
	iosig_pragma_free(resolved);
}

Pragma *pragma_of_marker(const clang::Decl *d)
{
	auto it = tu().marker_decls.find(d);
	return it == tu().marker_decls.end() ? nullptr : it->second;
}

Pragma *pragma_by_marker_name(llvm::StringRef name)
{
	unsigned id;

	if (!name.consume_front(kMarkerPrefix) || name.getAsInteger(10, id) ||
	    id >= tu().pragmas.size())
		return nullptr;
	return tu().pragmas[id].get();
}

Pragma *pragma_by_typedef_name(llvm::StringRef name)
{
	unsigned id;

	if (!name.consume_front(kTypedefPrefix) || name.getAsInteger(10, id) ||
	    id >= tu().pragmas.size())
		return nullptr;
	return tu().pragmas[id].get();
}

/* ---- locations ---------------------------------------------------------- */

clang::SourceLocation diag_loc(clang::SourceLocation loc)
{
	const clang::SourceManager &sm = tu().ctx->getSourceManager();

	if (!loc.isMacroID())
		return loc;
	clang::SourceLocation spell = sm.getSpellingLoc(loc);
	if (spell.isFileID() && !sm.isWrittenInScratchSpace(spell) &&
	    !sm.isWrittenInBuiltinFile(spell))
		return spell;
	return sm.getFileLoc(loc);
}

clang::SourceRange span_range(const Pragma &p, uint32_t off, uint32_t len)
{
	int first = -1, last = -1;

	if (p.spans.empty())
		return clang::SourceRange(p.loc);
	if (len == 0)
		len = 1;
	for (size_t i = 0; i < p.spans.size(); i++) {
		const Span &s = p.spans[i];

		if (s.off < off + len && s.off + s.len > off) {
			if (first < 0)
				first = (int)i;
			last = (int)i;
		}
	}
	if (first < 0) {
		/* Between tokens or past the end ("expected ')'"): the token
		 * before that position, else the first one. */
		first = 0;
		for (size_t i = 0; i < p.spans.size(); i++)
			if (p.spans[i].off <= off)
				first = (int)i;
		last = first;
	}
	return clang::SourceRange(diag_loc(p.spans[first].loc), diag_loc(p.spans[last].loc));
}

/* The pragma whose text holds e: p, or the sigdef p inherited e from (a
 * resolved parameter keeps the offsets of the text it was written in). */
static const Pragma &owner_of(const Pragma &p, const iosig_expr *e)
{
	const iosig_pragma *r = p.resolved ? p.resolved : p.parsed;

	for (unsigned i = 0; r && i < r->nparams; i++) {
		const iosig_pragma_param &q = r->params[i];

		if (!plugin_expr_contains(q.expr, e))
			continue;
		for (unsigned j = 0; p.parsed && j < p.parsed->nparams; j++)
			if (p.parsed->params[j].id == q.id)
				return p;
		return p.def ? *p.def : p;
	}
	return p;
}

clang::SourceRange expr_range(const Pragma &p, const iosig_expr *e)
{
	return span_range(owner_of(p, e), e->offset, e->length);
}

std::string expr_text(const Pragma &p, const iosig_expr *e)
{
	const std::string &text = owner_of(p, e).text;

	if (e->offset >= text.size())
		return e->text ? e->text : "";
	return text.substr(e->offset, std::min<size_t>(e->length, text.size() - e->offset));
}

void report_parser_error(const Pragma &p, const iosig_error &err)
{
	const clang::SourceManager &sm = tu().ctx->getSourceManager();
	std::string msg = err.msg;

	/* An earlier place of the pragma text that the message spells
	 * (err.related_*) becomes the place in the source file. */
	if (err.related_line > 0 && err.related_msg_length > 0 &&
	    err.related_msg_offset + err.related_msg_length <= msg.size()) {
		clang::SourceLocation l =
			sm.getExpansionLoc(span_range(p, (uint32_t)err.related_offset, 1).getBegin());
		clang::PresumedLoc pl = sm.getPresumedLoc(l);

		if (pl.isValid())
			msg.replace(err.related_msg_offset, err.related_msg_length,
				    "line " + std::to_string(pl.getLine()) + ", column " +
					    std::to_string(pl.getColumn()));
	}
	clang::SourceRange r = span_range(p, (uint32_t)err.offset, (uint32_t)err.length);
	report(Level::Error, r.getBegin(), msg, r);
}

/* ---- tokens -> text ----------------------------------------------------- */

class TextBuilder {
public:
	explicit TextBuilder(Pragma &p) : p_(p) {}

	/* Appends one token's text with its span. */
	void token(llvm::StringRef s, const clang::Token &tok)
	{
		if (!p_.text.empty() && tok.hasLeadingSpace())
			append(" ");
		p_.spans.push_back(Span{ (uint32_t)p_.text.size(), (uint32_t)s.size(),
					 tok.getLocation() });
		append(s);
	}

	bool too_long() const { return too_long_; }

private:
	void append(llvm::StringRef s)
	{
		if (p_.text.size() + s.size() + 1 > kMaxText) {
			too_long_ = true;
			return;
		}
		p_.text.append(s.data(), s.size());
	}

	Pragma &p_;
	bool too_long_ = false;
};

/* A string literal's value as the parser reads it: quotes and C escapes. */
static std::string quote(llvm::StringRef value)
{
	std::string out = "\"";

	for (unsigned char c : value) {
		char esc[8];

		if (c == '"' || c == '\\') {
			out += '\\';
			out += (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			snprintf(esc, sizeof(esc), "\\%03o", c);
			out += esc;
		} else {
			out += (char)c;
		}
	}
	return out + "\"";
}

/* One token into text; false after reporting an error. */
static bool lex_token(clang::Preprocessor &pp, const clang::Token &tok, TextBuilder &tb)
{
	llvm::SmallString<64> buf;
	bool invalid = false;

	if (tok.getIdentifierInfo()) {
		tb.token(tok.getIdentifierInfo()->getName(), tok);
		return true;
	}
	switch (tok.getKind()) {
	case clang::tok::numeric_constant:
		tb.token(pp.getSpelling(tok, buf, &invalid), tok);
		return !invalid;
	case clang::tok::char_constant:
	case clang::tok::utf8_char_constant:
		report(Level::Error, diag_loc(tok.getLocation()),
		       "character constants cannot appear in a signature value; write the number");
		return false;
	case clang::tok::string_literal:
	case clang::tok::utf8_string_literal: {
		clang::StringLiteralParser lit(llvm::ArrayRef<clang::Token>(tok), pp);

		if (lit.hadError)
			return false; /* the preprocessor reported it */
		tb.token(quote(lit.GetString()), tok);
		return true;
	}
	case clang::tok::wide_string_literal:
	case clang::tok::utf16_string_literal:
	case clang::tok::utf32_string_literal:
	case clang::tok::wide_char_constant:
	case clang::tok::utf16_char_constant:
	case clang::tok::utf32_char_constant:
		report(Level::Error, diag_loc(tok.getLocation()),
		       "wide character and string literals are not allowed in '#pragma io'; "
		       "write '\"...\"'");
		return false;
	default:
		if (const char *punct = clang::tok::getPunctuatorSpelling(tok.getKind())) {
			tb.token(punct, tok);
			return true;
		}
		report(Level::Error, diag_loc(tok.getLocation()), "stray character in '#pragma io'");
		return false;
	}
}

/* Reads every token of the pragma (always to its end) into p.text and
 * p.spans.  False after reporting an error. */
static bool lex_pragma(clang::Preprocessor &pp, Pragma &p)
{
	TextBuilder tb(p);
	clang::Token tok;
	bool ok = true;

	for (;;) {
		pp.Lex(tok);
		if (tok.isOneOf(clang::tok::eod, clang::tok::eof))
			break;
		if (!ok)
			continue;
		ok = lex_token(pp, tok, tb);
		if (tb.too_long()) {
			report(Level::Error, diag_loc(p.loc),
			       "'#pragma io' is too long (more than " + std::to_string(kMaxText - 1) +
				       " bytes after macro expansion)");
			ok = false;
		}
	}
	return ok;
}

/* ---- markers -------------------------------------------------------- */

static clang::Token make_token(clang::tok::TokenKind kind, clang::SourceLocation loc)
{
	clang::Token t;

	t.startToken();
	t.setKind(kind);
	t.setLocation(loc);
	t.setLength(0);
	return t;
}

static clang::Token make_ident(clang::Preprocessor &pp, clang::tok::TokenKind kind,
			       llvm::StringRef name, clang::SourceLocation loc)
{
	clang::Token t = make_token(kind, loc);

	t.setIdentifierInfo(pp.getIdentifierInfo(name));
	return t;
}

/* A token with its text in the scratch buffer (string literals, and what the
 * -E printer must be able to spell). */
static clang::Token make_spelt(clang::Preprocessor &pp, clang::tok::TokenKind kind,
			       llvm::StringRef text, clang::SourceLocation loc)
{
	clang::Token t = make_token(kind, loc);

	pp.CreateString(text, t, loc, loc);
	return t;
}

static void enter_tokens(clang::Preprocessor &pp, const std::vector<clang::Token> &v)
{
	auto toks = std::make_unique<clang::Token[]>(v.size());

	for (size_t i = 0; i < v.size(); i++)
		toks[i] = v[i];
	pp.EnterTokenStream(std::move(toks), (unsigned)v.size(), /*DisableMacroExpansion=*/true,
			    /*IsReinject=*/false);
}

/* The forms of a marker (see the head of the file). */
enum class MarkerForm {
	StaticAssert, /* C++11: static_assert(__iosig_pragma_N, ""); */
	Typedef,      /* typedef char __iosig_marker_N[__iosig_pragma_N]
			 __attribute__((__unused__)); - a declaration */
	VoidCast,     /* C: (void)__iosig_pragma_N; - a statement */
};

/* Hands the parser the marker of p. */
static void inject_marker(clang::Preprocessor &pp, Pragma &p, MarkerForm form)
{
	namespace tok = clang::tok;
	const std::string name = kMarkerPrefix + std::to_string(p.id);
	std::vector<clang::Token> v;
	clang::SourceLocation loc = p.loc;

	switch (form) {
	case MarkerForm::StaticAssert:
		v.push_back(make_ident(pp, tok::kw_static_assert, "static_assert", loc));
		v.push_back(make_token(tok::l_paren, loc));
		v.push_back(make_ident(pp, tok::identifier, name, loc));
		v.push_back(make_token(tok::comma, loc));
		v.push_back(make_spelt(pp, tok::string_literal, "\"\"", loc));
		v.push_back(make_token(tok::r_paren, loc));
		break;
	case MarkerForm::Typedef:
		v.push_back(make_ident(pp, tok::kw_typedef, "typedef", loc));
		v.push_back(make_ident(pp, tok::kw_char, "char", loc));
		v.push_back(make_ident(pp, tok::identifier, kTypedefPrefix + std::to_string(p.id), loc));
		v.push_back(make_token(tok::l_square, loc));
		v.push_back(make_ident(pp, tok::identifier, name, loc));
		v.push_back(make_token(tok::r_square, loc));
		v.push_back(make_ident(pp, tok::kw___attribute, "__attribute__", loc));
		v.push_back(make_token(tok::l_paren, loc));
		v.push_back(make_token(tok::l_paren, loc));
		v.push_back(make_ident(pp, tok::identifier, "__unused__", loc));
		v.push_back(make_token(tok::r_paren, loc));
		v.push_back(make_token(tok::r_paren, loc));
		break;
	case MarkerForm::VoidCast:
		v.push_back(make_token(tok::l_paren, loc));
		v.push_back(make_ident(pp, tok::kw_void, "void", loc));
		v.push_back(make_token(tok::r_paren, loc));
		v.push_back(make_ident(pp, tok::identifier, name, loc));
		break;
	}
	v.push_back(make_token(tok::semi, loc));
	enter_tokens(pp, v);
}

/* -E: the pragma back as _Pragma("io TEXT"), not expanded again. */
static void write_back(clang::Preprocessor &pp, const Pragma &p)
{
	namespace tok = clang::tok;
	std::vector<clang::Token> v;
	std::string s = "io";

	if (!p.text.empty())
		s += " " + p.text;
	v.push_back(make_ident(pp, tok::identifier, "_Pragma", p.loc));
	v.front().setFlag(clang::Token::StartOfLine);
	v.push_back(make_spelt(pp, tok::l_paren, "(", p.loc));
	v.push_back(make_spelt(pp, tok::string_literal, quote(s), p.loc));
	v.push_back(make_spelt(pp, tok::r_paren, ")", p.loc));
	enter_tokens(pp, v);
}

/* ---- the handler -------------------------------------------------------- */

/* True if the parser is inside an expression when it meets a pragma after
 * token `before`: a pragma may only stand between statements and
 * declarations (GCC's parser takes no other). */
static bool in_expression(clang::tok::TokenKind before)
{
	namespace tok = clang::tok;

	switch (before) {
	case tok::equal: case tok::plusequal: case tok::minusequal: case tok::starequal:
	case tok::slashequal: case tok::percentequal: case tok::ampequal: case tok::pipeequal:
	case tok::caretequal: case tok::lesslessequal: case tok::greatergreaterequal:
	case tok::l_paren: case tok::l_square: case tok::comma: case tok::question:
	case tok::kw_return: case tok::exclaim: case tok::tilde: case tok::amp:
	case tok::ampamp: case tok::pipe: case tok::pipepipe: case tok::caret: case tok::plus:
	case tok::minus: case tok::star: case tok::slash: case tok::percent: case tok::less:
	case tok::lessequal: case tok::greaterequal: case tok::equalequal:
	case tok::exclaimequal: case tok::lessless: case tok::greatergreater:
	case tok::arrow: case tok::period: case tok::plusplus: case tok::minusminus:
		return true;
	default:
		return false;
	}
}

/* In C: true if the pragma is inside a function body.  Sema's context is
 * the function's until the token after its closing brace has been read,
 * which is when a pragma right after the function is handled; then the
 * current scope is still the function's outermost one. */
static bool c_in_function(const Tu &t)
{
	clang::Sema *s = t.sema;

	if (!s || !s->CurContext || !s->CurContext->isFunctionOrMethod())
		return false;
	if (t.last_token == clang::tok::r_brace && s->getCurScope() &&
	    (s->getCurScope()->getFlags() & clang::Scope::FnScope))
		return false;
	return true;
}

class IoPragmaHandler : public clang::PragmaHandler {
public:
	IoPragmaHandler() : clang::PragmaHandler("io") {}

	void HandlePragma(clang::Preprocessor &pp, clang::PragmaIntroducer intro,
			  clang::Token &first) override
	{
		Tu &t = tu();

		if (!t.active) {
			/* No compilation: -E, or the plugin action failed to
			 * start (its error was reported). */
			Pragma p;

			p.loc = first.getLocation();
			if (pp.isPreprocessedOutput() && t.ctx == nullptr) {
				TextBuilder tb(p);
				clang::Token tok;

				for (pp.Lex(tok); !tok.isOneOf(clang::tok::eod, clang::tok::eof);
				     pp.Lex(tok))
					tb.token(pp.getSpelling(tok), tok);
				write_back(pp, p);
			} else {
				pp.DiscardUntilEndOfDirective();
			}
			return;
		}

		clang::tok::TokenKind before = t.last_token;
		t.pragmas.push_back(std::make_unique<Pragma>());
		Pragma &p = *t.pragmas.back();
		iosig_error err = {};

		p.id = (unsigned)t.pragmas.size() - 1;
		p.loc = first.getLocation();
		if (!lex_pragma(pp, p))
			return;
		if (in_expression(before)) {
			/* Where GCC reports it: the _Pragma operator, or the "io". */
			clang::SourceLocation at =
				diag_loc(intro.Kind == clang::PIK__Pragma ? intro.Loc : p.loc);

			report(Level::Error, at, "'#pragma io' is not allowed inside an expression");
			report(Level::Note, at, PLUGIN_PRAGMA_IN_EXPRESSION);
			t.last_token = before;
			return;
		}
		if (plugin_is_opener(p.text.data(), p.text.size())) {
			/* Resolved in its scope, like the others (sema.cc). */
			if (plugin_opener_parse(p.text.data(), p.text.size(), &p.opener, &err) < 0) {
				report_parser_error(p, err);
				return;
			}
			p.is_opener = true;
		} else if (iosig_pragma_parse(p.text.data(), p.text.size(), &p.parsed, &err) < 0) {
			report_parser_error(p, err);
			return;
		} else {
			p.kind = p.parsed->kind;
		}
		p.parsed_ok = true;
		if (!t.source_added && t.sema) {
			add_external_source(*t.sema, make_marker_source());
			t.source_added = true;
		}
		t.last_token = before;
		if (t.cxx)
			inject_marker(pp, p, pp.getLangOpts().CPlusPlus11 ? MarkerForm::StaticAssert
									 : MarkerForm::Typedef);
		else if (c_in_function(t))
			/* At the start of a block a declaration, so that the block's
			 * declarations may follow in C89; elsewhere a statement, which
			 * may follow a label. */
			inject_marker(pp, p, before == clang::tok::l_brace ? MarkerForm::Typedef
									   : MarkerForm::VoidCast);
		else
			process_pragma(p, t.ctx->getTranslationUnitDecl(),
				       t.sema ? t.sema->getCurScope() : nullptr);
	}
};

clang::PragmaHandler *make_pragma_handler()
{
	return new IoPragmaHandler();
}

} // namespace cp
