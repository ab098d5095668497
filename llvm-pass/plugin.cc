/* SPDX-License-Identifier: MIT */
/*
 * plugin.cc - entry points of iosig-clang.so in the clang front end
 * (docs/design.md §4): the version check, the "io" pragma handler and the
 * plugin action in clang's registries, -fplugin-arg-iosig-* options, help,
 * diagnostics, and the AST consumer that binds pragmas to calls before
 * CodeGen sees a function.  The LLVM pass half is in pass.cc.
 */
#include "iosig-clang.h"

#include <dlfcn.h>
#include <link.h>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "clang/AST/ASTConsumer.h"
#include "clang/Basic/CodeGenOptions.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "clang/Lex/Pragma.h"
#include "clang/Sema/SemaConsumer.h"

namespace cp {

Options opts;

static Tu the_tu;

Tu &tu()
{
	return the_tu;
}

static const char help_text[] =
	PLUGIN_HELP_COMMON
	"Load it with -fplugin=PATH -fpass-plugin=PATH (the same file) and link the\n"
	"program with -liosig, or compile with iosig-cc / iosig-c++.\n"
	"See docs/clang-plugin.md.\n";

/* ---- diagnostics ------------------------------------------------------ */

void report(Level level, clang::SourceLocation loc, const std::string &msg,
	    clang::SourceRange range)
{
	clang::DiagnosticsEngine &d = tu().ci->getDiagnostics();
	clang::DiagnosticsEngine::Level l = level == Level::Error   ? clang::DiagnosticsEngine::Error
					    : level == Level::Warning ? clang::DiagnosticsEngine::Warning
								      : clang::DiagnosticsEngine::Note;
	unsigned errors = d.getNumErrors();

	/* clang drops a note that follows no diagnostic. */
	if (level == Level::Info)
		d.setLastDiagnosticIgnored(false);
	{
		clang::DiagnosticBuilder b = d.Report(loc, d.getCustomDiagID(l, "%0"));

		b << msg;
		if (range.isValid())
			b << clang::CharSourceRange::getTokenRange(range);
	}
	tu().own_errors += d.getNumErrors() - errors;
}

bool foreign_errors()
{
	return tu().ci->getDiagnostics().getNumErrors() > tu().own_errors;
}

void report_unbound(clang::SourceLocation loc, const plugin_unbound_info &u)
{
	clang::DiagnosticsEngine &d = tu().ci->getDiagnostics();
	char msg[1024];

	/* Like a warning of the compiler (and of the GCC plugin): -w silences
	 * it, -Werror makes it an error.  clang applies neither to a
	 * plugin's own diagnostics. */
	if (opts.unbound == Unbound::Ignore ||
	    (opts.unbound == Unbound::Warning && d.getIgnoreAllWarnings()))
		return;
	plugin_unbound_message(msg, sizeof(msg), &u, "'", "'");
	if (opts.unbound == Unbound::Warning && d.getWarningsAsErrors())
		/* As GCC says it. */
		report(Level::Error, loc, std::string(msg) + " [-Werror]");
	else
		report(opts.unbound == Unbound::Error ? Level::Error : Level::Warning, loc, msg);
}

std::string type_name(clang::QualType type)
{
	return "'" + type.getAsString(tu().ctx->getPrintingPolicy()) + "'";
}

/* Reports an error without a location (options). */
static void report_plain(clang::DiagnosticsEngine &d, const std::string &msg)
{
	d.Report(d.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0")) << msg;
}

/* ---- the file this code was loaded from ----------------------------- */

static std::string self_path()
{
	Dl_info info;

	if (dladdr(reinterpret_cast<void *>(&self_path), &info) && info.dli_fname)
		return info.dli_fname;
	return "iosig-clang.so";
}

static bool same_file(const std::string &a, const std::string &b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (!realpath(a.c_str(), ra) || !realpath(b.c_str(), rb))
		return a == b;
	return strcmp(ra, rb) == 0;
}

/* ---- version check ------------------------------------------------------ */

/*
 * The clang this plugin was built for must be the one it is loaded into:
 * the plugin uses clang's C++ classes, whose layout changes between
 * versions.  Debian's clang-N runs with libclang-cpp.so.N; its soname
 * tells the running version without calling into it.
 */
struct LoadedVersion {
	int major = -1;
	std::string lib;
};

static int find_clang_lib(struct dl_phdr_info *info, size_t, void *data)
{
	LoadedVersion *v = static_cast<LoadedVersion *>(data);
	const char *name = info->dlpi_name, *base;

	if (!name || !*name)
		return 0;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strncmp(base, "libclang-cpp.so.", 16) == 0) {
		v->major = atoi(base + 16);
		v->lib = base;
		return 1;
	}
	return 0;
}

/* True if the running clang is the one the plugin was built for; otherwise
 * says which versions it compared. */
static bool version_ok()
{
	LoadedVersion v;

	dl_iterate_phdr(find_clang_lib, &v);
	if (v.major < 0 || v.major == CLANG_VERSION_MAJOR)
		return true; /* a statically linked clang cannot be told apart */
	fprintf(stderr,
		"error: %s was built for clang %s (libclang-cpp.so.%d) but is loaded into a clang "
		"that uses %s; use the iosig plugin built for clang %d, or rebuild it with that "
		"clang's headers (llvm-%d-dev, libclang-%d-dev)\n",
		self_path().c_str(), CLANG_VERSION_STRING, CLANG_VERSION_MAJOR, v.lib.c_str(),
		v.major, v.major, v.major);
	return false;
}

/* ---- options ----------------------------------------------------------- */

static bool parse_args(clang::DiagnosticsEngine &d, const std::vector<std::string> &args)
{
	bool ok = true;

	for (const std::string &a : args) {
		size_t eq = a.find('=');
		std::string key = a.substr(0, eq);
		bool has_value = eq != std::string::npos;
		std::string value = has_value ? a.substr(eq + 1) : "";

		if (key == "verbose" && !has_value) {
			opts.verbose = true;
		} else if (key == "help" && !has_value) {
			fputs(help_text, stdout);
			fflush(stdout);
		} else if (key == "unbound" && has_value) {
			if (value == "warning") {
				opts.unbound = Unbound::Warning;
			} else if (value == "error") {
				opts.unbound = Unbound::Error;
			} else if (value == "ignore") {
				opts.unbound = Unbound::Ignore;
			} else {
				report_plain(d, "invalid value '" + value +
						     "' in '-fplugin-arg-iosig-unbound=" + value +
						     "'; use 'warning', 'error' or 'ignore'");
				ok = false;
			}
		} else if (key == "verbose" || key == "help") {
			report_plain(d, "'-fplugin-arg-iosig-" + key + "' takes no value (remove '=" +
						value + "')");
			ok = false;
		} else if (key == "unbound") {
			report_plain(d, "'-fplugin-arg-iosig-unbound' needs a value: "
					"'-fplugin-arg-iosig-unbound=error' (or warning, ignore)");
			ok = false;
		} else {
			report_plain(d, "unknown option '-fplugin-arg-iosig-" + key +
						"'; the options are verbose, unbound=warning|error|ignore "
						"and help");
			ok = false;
		}
	}
	return ok;
}

/* ---- the AST consumer -------------------------------------------------- */

/* Hands the constructors of file-scope jobwide pragmas to CodeGen (through
 * the consumers after this one). */
static void flush_constructors()
{
	Tu &t = tu();

	if (t.pending_ctors.empty() || !t.sema)
		return;
	std::vector<clang::FunctionDecl *> fns;
	fns.swap(t.pending_ctors);
	t.dispatching = true;
	for (clang::FunctionDecl *fn : fns)
		t.sema->Consumer.HandleTopLevelDecl(clang::DeclGroupRef(fn));
	t.dispatching = false;
}

class Consumer : public clang::SemaConsumer {
public:
	void InitializeSema(clang::Sema &s) override { tu().sema = &s; }

	void ForgetSema() override { tu().sema = nullptr; }

	/* Runs before CodeGen's consumer (the action is added before the
	 * main one), so rewritten bodies are what CodeGen compiles. */
	bool HandleTopLevelDecl(clang::DeclGroupRef group) override
	{
		if (tu().dispatching)
			return true;
		flush_constructors();
		if (!tu().any_function_pragma)
			return true;
		for (clang::Decl *d : group)
			bind_decl(d);
		return true;
	}

	void HandleTranslationUnit(clang::ASTContext &) override
	{
		flush_constructors();
		bind_finish();
	}

	~Consumer() override
	{
		Tu &t = tu();

		if (t.pp)
			t.pp->setTokenWatcher(nullptr);
		sema_reset();
		the_tu = Tu();
	}
};

static bool generates_code(clang::frontend::ActionKind kind)
{
	switch (kind) {
	case clang::frontend::EmitAssembly:
	case clang::frontend::EmitBC:
	case clang::frontend::EmitLLVM:
	case clang::frontend::EmitLLVMOnly:
	case clang::frontend::EmitCodeGenOnly:
	case clang::frontend::EmitObj:
		return true;
	default:
		return false;
	}
}

/* __IOSIG__ (plugin_shared.h), before the command line's macros so that a
 * -U__IOSIG__ wins.  The main file has not been entered yet.  (A
 * preprocessing-only run, -E, creates no AST consumer: there the macro
 * cannot be defined, see docs/clang-plugin.md.) */
static void predefine(clang::Preprocessor &pp)
{
	std::string s = pp.getPredefines();
	const std::string def = "#define " PLUGIN_IOSIG_MACRO " " PLUGIN_IOSIG_VERSION "\n";
	size_t at = s.find("# 1 \"<command line>\" 1\n");

	s.insert(at == std::string::npos ? s.size() : at, def);
	pp.setPredefines(s);
}

class Action : public clang::PluginASTAction {
protected:
	std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &ci,
							      llvm::StringRef) override
	{
		Tu &t = tu();

		t = Tu();
		sema_reset();
		t.active = true;
		t.ci = &ci;
		t.ctx = &ci.getASTContext();
		t.pp = &ci.getPreprocessor();
		t.cxx = ci.getLangOpts().CPlusPlus;
		std::string self = self_path();
		clang::frontend::ActionKind action = ci.getFrontendOpts().ProgramAction;
		for (const std::string &p : ci.getCodeGenOpts().PassPlugins)
			t.pass_loaded |= same_file(p, self);
		/* IR written without running passes (-save-temps writes bitcode
		 * first) gets the pass when it is compiled; machine code made
		 * without passes never does. */
		if (ci.getCodeGenOpts().DisableLLVMPasses)
			t.pass_loaded = action == clang::frontend::EmitBC ||
					action == clang::frontend::EmitLLVM;
		/* Without code generation nothing needs the pass. */
		if (!generates_code(action))
			t.pass_loaded = true;
		/* The pragma handler needs the token before a pragma: in C
		 * whether it is in a function, in both whether it is inside an
		 * expression (see pragma.cc). */
		t.pp->setTokenWatcher(watch_token);
		predefine(*t.pp);
		return std::make_unique<Consumer>();
	}

	bool ParseArgs(const clang::CompilerInstance &ci,
		       const std::vector<std::string> &args) override
	{
		opts = Options();
		return parse_args(ci.getDiagnostics(), args);
	}

	ActionType getActionType() override { return AddBeforeMainAction; }
};

/* ---- registration ------------------------------------------------------ */

/* The registry instantiates a class with a default constructor; the
 * handler itself lives in pragma.cc. */
class RegisteredPragmaHandler : public clang::PragmaHandler {
public:
	RegisteredPragmaHandler() : clang::PragmaHandler("io"), impl(make_pragma_handler()) {}
	void HandlePragma(clang::Preprocessor &pp, clang::PragmaIntroducer intro,
			  clang::Token &tok) override
	{
		impl->HandlePragma(pp, intro, tok);
	}

private:
	std::unique_ptr<clang::PragmaHandler> impl;
};

namespace {

/* Registers the handler and the action when the plugin is loaded, after
 * checking the version (a mismatch ends the compilation: going on would
 * silently ignore the pragmas, or crash). */
struct Registration {
	Registration()
	{
		if (!version_ok())
			exit(1);
		static clang::PragmaHandlerRegistry::Add<RegisteredPragmaHandler> pragma(
			"io", "#pragma io sig/sigdef/jobwide (IOSIG)");
		static clang::FrontendPluginRegistry::Add<Action> action(
			"iosig", "binds #pragma io signatures to the calls they describe");
	}
} registration;

} // namespace

/* Says once that the pass half is missing, at the first bound pragma. */
bool check_pass_loaded(clang::SourceLocation loc)
{
	Tu &t = tu();

	if (t.pass_loaded)
		return true;
	if (!t.pass_warned) {
		const clang::CodeGenOptions &cg = t.ci->getCodeGenOpts();
		std::string self = self_path();

		if (cg.DisableLLVMPasses)
			report(Level::Error, loc, "the calls that '#pragma io' describes are "
			       "rewritten by the iosig LLVM pass, which does not run with "
			       "-disable-llvm-passes");
		else
			report(Level::Error, loc, "the calls that '#pragma io' describes are "
			       "rewritten by the iosig LLVM pass: add '-fpass-plugin=" + self +
			       "' next to '-fplugin=" + self + "'");
		t.pass_warned = true;
	}
	return false;
}

} // namespace cp
