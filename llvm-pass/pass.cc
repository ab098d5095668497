/* SPDX-License-Identifier: MIT */
/*
 * pass.cc - the LLVM half of iosig-clang.so (loaded with -fpass-plugin):
 * turns the marker calls the front end left (calls.cc) into calls of
 * libiosig with static, read-only site descriptors (iosig.h "Compiler-
 * generated calls").
 *
 * It runs first in every pipeline, -O0 included (isRequired, so optnone
 * functions are not skipped), before any optimisation could move, merge or
 * inline the calls: the marker of a bound call has the call's result as
 * its last argument, so the binding is a data dependence, not a position,
 * and nothing can come between the two.
 *
 *   __iosig_bind_*(canon, file, line, col, n, v.., %r = call @open(p, f))
 *       -> %r = call @iosig_open(@site, p, f, 0, v..)      (invoke stays invoke)
 *   __iosig_prepare_mk(canon, file, line, col, n, "ofstream", path, mode, implied,
 *                      in, out, trunc, app, v..)
 *       -> call @iosig_prepare(@site, AT_FDCWD, path, flags[mode|implied], v..)
 *   __iosig_jobwide_mk(canon, file, line, col, n, v..)
 *       -> call @iosig_jobwide(@site, v..)
 *   %b = __iosig_opener_begin_mk(canon, file, line, col, n, "name", dirfd, path, flags,
 *                                fmode, v..)
 *       -> %b = call @iosig_opener_begin(@site, dirfd, path, flags, fmode, v..)
 *   %d = __iosig_opener_done_mk(%b, %r)   (after %r = the opener's call)
 *       -> call @iosig_opener_end(@site); %d is %r
 *   __iosig_idiv(a, b) -> trunc(a / b) + 0.0,  __iosig_imod(a, b) -> a - b * idiv(a, b)
 *
 * The site is { i32 IOSIG_SITE_ABI, i32 n, ptr canon, ptr file, i32 line,
 * i32 column, ptr call } - struct iosig_site's layout on every ABI where
 * pointers are 4 or 8 bytes.  A module without markers is not touched; one
 * with markers is verified afterwards (release builds of clang run no IR
 * verifier).
 */
#include "iosig-clang.h"

#include <fcntl.h>


#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"

namespace cp {

namespace {

class Lowering {
public:
	explicit Lowering(llvm::Module &m)
		: m_(m), c_(m.getContext()), i8p_(llvm::Type::getInt8PtrTy(m.getContext())),
		  i32_(llvm::Type::getInt32Ty(m.getContext())),
		  f64_(llvm::Type::getDoubleTy(m.getContext()))
	{
	}

	bool run();

private:
	std::vector<llvm::CallBase *> calls_of(const char *name);
	void error(const llvm::Twine &msg) { c_.emitError("iosig: " + msg); }
	llvm::Constant *cstring(llvm::StringRef s);
	llvm::Constant *as_i8p(llvm::Value *v);
	llvm::Constant *site(llvm::CallBase *mark, llvm::Constant *call_name, unsigned nvalues);
	unsigned nvalues(llvm::CallBase *mark, unsigned fixed);
	void lower_arith(llvm::CallBase *call, bool mod);
	void lower_bind(llvm::CallBase *mark);
	void lower_prepare(llvm::CallBase *mark);
	void lower_jobwide(llvm::CallBase *mark);
	llvm::Constant *opener_site(llvm::CallBase *begin);
	void lower_opener_done(llvm::CallBase *mark);
	void lower_opener_begin(llvm::CallBase *mark);
	llvm::Value *stream_flags(llvm::IRBuilder<> &b, llvm::CallBase *mark);

	llvm::Module &m_;
	llvm::LLVMContext &c_;
	llvm::Type *i8p_, *i32_, *f64_;
	llvm::StringMap<llvm::Constant *> strings_;
	llvm::GlobalVariable *flags_table_ = nullptr;
	llvm::DenseMap<llvm::CallBase *, llvm::Constant *> opener_sites_; /* per begin marker */
};

/* The number of fixed parameters of each marker. */
constexpr unsigned kSiteArgs = 5;     /* canon, file, line, column, count */
constexpr unsigned kPrepareArgs = 13; /* + call, path, mode, implied, in, out, trunc, app */
constexpr unsigned kOpenerArgs = 10;  /* + call, dirfd, path, flags, fmode */

} // namespace

std::vector<llvm::CallBase *> Lowering::calls_of(const char *name)
{
	std::vector<llvm::CallBase *> v;
	llvm::Function *f = m_.getFunction(name);

	if (!f)
		return v;
	/* Direct calls, and calls through a cast of the function (a marker
	 * declared with two pointer return types under typed pointers). */
	llvm::SmallVector<llvm::User *, 16> users(f->user_begin(), f->user_end());
	while (!users.empty()) {
		llvm::User *u = users.pop_back_val();

		if (auto *cb = llvm::dyn_cast<llvm::CallBase>(u)) {
			if (cb->getCalledOperand()->stripPointerCasts() == f)
				v.push_back(cb);
		} else if (llvm::isa<llvm::ConstantExpr>(u)) {
			users.append(u->user_begin(), u->user_end());
		}
	}
	return v;
}

llvm::Constant *Lowering::cstring(llvm::StringRef s)
{
	llvm::Constant *&c = strings_[s];

	if (!c) {
		llvm::Constant *data = llvm::ConstantDataArray::getString(c_, s);
		auto *gv = new llvm::GlobalVariable(m_, data->getType(), true,
						    llvm::GlobalValue::PrivateLinkage, data,
						    ".iosig.call");
		gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
		gv->setAlignment(llvm::Align(1));
		c = llvm::ConstantExpr::getPointerCast(gv, i8p_);
	}
	return c;
}

llvm::Constant *Lowering::as_i8p(llvm::Value *v)
{
	auto *c = llvm::dyn_cast<llvm::Constant>(v);

	return c ? llvm::ConstantExpr::getPointerCast(c, i8p_) : nullptr;
}

unsigned Lowering::nvalues(llvm::CallBase *mark, unsigned fixed)
{
	auto *n = llvm::dyn_cast<llvm::ConstantInt>(mark->getArgOperand(kSiteArgs - 1));

	if (!n || mark->arg_size() < fixed + n->getZExtValue()) {
		error("a marker call has the wrong shape (was it made by this plugin's front end?)");
		return ~0u;
	}
	return (unsigned)n->getZExtValue();
}

/* The static site descriptor of a marker's pragma. */
llvm::Constant *Lowering::site(llvm::CallBase *mark, llvm::Constant *call_name, unsigned n)
{
	llvm::Constant *canon = as_i8p(mark->getArgOperand(0));
	llvm::Constant *file = as_i8p(mark->getArgOperand(1));
	auto *line = llvm::dyn_cast<llvm::ConstantInt>(mark->getArgOperand(2));
	auto *col = llvm::dyn_cast<llvm::ConstantInt>(mark->getArgOperand(3));

	if (!canon || !file || !line || !col) {
		error("a marker call has no constant site (was it made by this plugin's front end?)");
		return nullptr;
	}
	llvm::StructType *type = llvm::StructType::get(c_, { i32_, i32_, i8p_, i8p_, i32_, i32_, i8p_ });
	llvm::Constant *init = llvm::ConstantStruct::get(
		type, { llvm::ConstantInt::get(i32_, IOSIG_SITE_ABI), llvm::ConstantInt::get(i32_, n),
			canon, file, llvm::ConstantInt::get(i32_, line->getZExtValue()),
			llvm::ConstantInt::get(i32_, col->getZExtValue()), call_name });
	auto *gv = new llvm::GlobalVariable(m_, type, true, llvm::GlobalValue::PrivateLinkage, init,
					    "__iosig_site");
	gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
	return llvm::ConstantExpr::getPointerCast(gv, i8p_);
}

/* C's truncating integer division of the doubles a and b, as the GCC
 * plugin computes it: q = a / b, then (double)(long long)q when |q| < 2^52
 * (above, q is integral already; NaN and infinities stay as they are).
 * No call of trunc(): the program need not link libm. */
void Lowering::lower_arith(llvm::CallBase *call, bool mod)
{
	llvm::IRBuilder<> b(call);
	llvm::Value *x = call->getArgOperand(0), *y = call->getArgOperand(1);
	llvm::Value *q = b.CreateFDiv(x, y);
	llvm::Value *small = b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, q),
					     llvm::ConstantFP::get(f64_, 4503599627370496.0));
	llvm::Type *i64 = llvm::Type::getInt64Ty(c_);
	/* The conversion of a large q is poison, but then q is selected. */
	llvm::Value *tr = b.CreateSIToFP(b.CreateFPToSI(q, i64), f64_);
	llvm::Value *r = b.CreateSelect(small, tr, q);

	if (mod)
		r = b.CreateFSub(x, b.CreateFMul(y, r));
	call->replaceAllUsesWith(r);
	call->eraseFromParent();
}

/* A call of `callee` with `args` where `old` is: a call, or an invoke
 * with the same destinations. */
static llvm::CallBase *replace_call(llvm::CallBase *old, llvm::FunctionCallee callee,
				    llvm::ArrayRef<llvm::Value *> args)
{
	llvm::CallBase *nc;

	if (auto *inv = llvm::dyn_cast<llvm::InvokeInst>(old))
		nc = llvm::InvokeInst::Create(callee, inv->getNormalDest(), inv->getUnwindDest(), args,
					      "", old);
	else
		nc = llvm::CallInst::Create(callee, args, "", old);
	nc->setDebugLoc(old->getDebugLoc());
	nc->setCallingConv(old->getCallingConv());
	return nc;
}

void Lowering::lower_bind(llvm::CallBase *mark)
{
	unsigned n = nvalues(mark, kSiteArgs + 1);

	if (n == ~0u)
		return;
	auto *orig = llvm::dyn_cast<llvm::CallBase>(mark->getArgOperand(kSiteArgs + n));
	auto *fn = orig ? llvm::dyn_cast<llvm::Function>(orig->getCalledOperand()->stripPointerCasts())
			: nullptr;
	const Callee *ce = fn ? find_callee(fn->getName()) : nullptr;
	if (!ce || !orig->hasOneUse()) {
		error("a bound call is not a call of a supported function any more (" +
		      (fn ? fn->getName() : llvm::StringRef("an indirect call")) + ")");
		return;
	}
	if (ce->lfs_alias && m_.getDataLayout().getPointerSize() < 8) {
		error(llvm::Twine("'") + ce->symbol + "' (selected by _FILE_OFFSET_BITS=64) has no "
		      "libiosig replacement on this 32-bit target");
		return;
	}
	llvm::Constant *s = site(mark, cstring(ce->symbol), n);
	if (!s)
		return;

	llvm::IRBuilder<> b(orig);
	llvm::SmallVector<llvm::Value *, 16> args{ s };
	llvm::SmallVector<llvm::Type *, 8> params{ i8p_ };
	unsigned nargs = (unsigned)orig->arg_size();
	auto arg = [&](unsigned i) { return orig->getArgOperand(i); };
	auto ptr = [&](unsigned i) { return b.CreatePointerCast(arg(i), i8p_); };
	auto i32 = [&](llvm::Value *v) { return b.CreateIntCast(v, i32_, false); };
	llvm::Type *ret = orig->getType();

	switch (ce->shape) {
	case Shape::Open:   /* path, flags[, mode] */
		args.append({ ptr(0), i32(arg(1)),
			      nargs > 2 ? i32(arg(2)) : llvm::ConstantInt::get(i32_, 0) });
		params.append({ i8p_, i32_, i32_ });
		break;
	case Shape::OpenAt: /* dirfd, path, flags[, mode] */
		args.append({ i32(arg(0)), ptr(1), i32(arg(2)),
			      nargs > 3 ? i32(arg(3)) : llvm::ConstantInt::get(i32_, 0) });
		params.append({ i32_, i8p_, i32_, i32_ });
		break;
	case Shape::Creat:  /* path, mode */
		args.append({ ptr(0), i32(arg(1)) });
		params.append({ i8p_, i32_ });
		break;
	case Shape::Fopen:  /* path, mode */
		args.append({ ptr(0), ptr(1) });
		params.append({ i8p_, i8p_ });
		break;
	case Shape::Freopen: /* path, mode, stream */
		args.append({ ptr(0), ptr(1), arg(2) });
		params.append({ i8p_, i8p_, arg(2)->getType() });
		break;
	case Shape::Mpi:    /* comm, path, amode, info, fh: MPI handles as they are */
		args.append({ arg(0), ptr(1), i32(arg(2)), arg(3), arg(4) });
		params.append({ arg(0)->getType(), i8p_, i32_, arg(3)->getType(), arg(4)->getType() });
		break;
	}
	for (unsigned i = 0; i < n; i++)
		args.push_back(mark->getArgOperand(kSiteArgs + i));
	llvm::FunctionCallee entry =
		m_.getOrInsertFunction(ce->entry, llvm::FunctionType::get(ret, params, true));
	llvm::CallBase *nc = replace_call(orig, entry, args);

	llvm::IRBuilder<> after(mark);
	mark->replaceAllUsesWith(after.CreateBitOrPointerCast(nc, mark->getType()));
	mark->eraseFromParent();
	orig->eraseFromParent();
}

llvm::Value *Lowering::stream_flags(llvm::IRBuilder<> &b, llvm::CallBase *mark)
{
	if (!flags_table_) {
		llvm::SmallVector<uint32_t, 16> v(std::begin(openmode_flags),
						  std::end(openmode_flags));
		llvm::Constant *init = llvm::ConstantDataArray::get(c_, v);

		flags_table_ = new llvm::GlobalVariable(m_, init->getType(), true,
							llvm::GlobalValue::PrivateLinkage, init,
							"__iosig_stream_flags");
		flags_table_->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
	}
	/* mode | implied, then one index bit per openmode bit. */
	llvm::Value *mode = b.CreateOr(b.CreateIntCast(mark->getArgOperand(7), i32_, false),
				       b.CreateIntCast(mark->getArgOperand(8), i32_, false));
	llvm::Value *idx = llvm::ConstantInt::get(i32_, 0);
	for (unsigned i = 0; i < 4; i++) {
		llvm::Value *bit = b.CreateIntCast(mark->getArgOperand(9 + i), i32_, false);
		llvm::Value *has = b.CreateICmpNE(b.CreateAnd(mode, bit), llvm::ConstantInt::get(i32_, 0));
		idx = b.CreateOr(idx, b.CreateShl(b.CreateZExt(has, i32_), i));
	}
	llvm::Value *gep = b.CreateInBoundsGEP(flags_table_->getValueType(), flags_table_,
					       { llvm::ConstantInt::get(i32_, 0), idx });
	return b.CreateLoad(i32_, gep);
}

void Lowering::lower_prepare(llvm::CallBase *mark)
{
	unsigned n = nvalues(mark, kPrepareArgs);

	if (n == ~0u)
		return;
	llvm::Constant *call_name = as_i8p(mark->getArgOperand(5));
	llvm::Constant *s = call_name ? site(mark, call_name, n) : nullptr;
	if (!s)
		return;
	llvm::IRBuilder<> b(mark);
	llvm::SmallVector<llvm::Value *, 16> args{ s, llvm::ConstantInt::get(i32_, (uint64_t)AT_FDCWD, true),
						   b.CreatePointerCast(mark->getArgOperand(6), i8p_),
						   stream_flags(b, mark) };
	for (unsigned i = 0; i < n; i++)
		args.push_back(mark->getArgOperand(kPrepareArgs + i));
	llvm::FunctionCallee entry = m_.getOrInsertFunction(
		"iosig_prepare", llvm::FunctionType::get(i32_, { i8p_, i32_, i8p_, i32_ }, true));
	replace_call(mark, entry, args);
	mark->eraseFromParent();
}

void Lowering::lower_jobwide(llvm::CallBase *mark)
{
	unsigned n = nvalues(mark, kSiteArgs);

	if (n == ~0u)
		return;
	llvm::Constant *s = site(mark, cstring("jobwide"), n);
	if (!s)
		return;
	llvm::SmallVector<llvm::Value *, 16> args{ s };
	for (unsigned i = 0; i < n; i++)
		args.push_back(mark->getArgOperand(kSiteArgs + i));
	llvm::FunctionCallee entry = m_.getOrInsertFunction(
		"iosig_jobwide", llvm::FunctionType::get(llvm::Type::getVoidTy(c_), { i8p_ }, true));
	replace_call(mark, entry, args);
	mark->eraseFromParent();
}

/* The site of an opener's call, one for its begin and its end. */
llvm::Constant *Lowering::opener_site(llvm::CallBase *begin)
{
	llvm::Constant *&s = opener_sites_[begin];
	unsigned n;

	if (s)
		return s;
	n = nvalues(begin, kOpenerArgs);
	if (n == ~0u)
		return nullptr;
	llvm::Constant *call_name = as_i8p(begin->getArgOperand(5));
	s = call_name ? site(begin, call_name, n) : nullptr;
	return s;
}

void Lowering::lower_opener_done(llvm::CallBase *mark)
{
	auto *begin = llvm::dyn_cast<llvm::CallBase>(mark->getArgOperand(0)->stripPointerCasts());
	auto *fn = begin ? llvm::dyn_cast<llvm::Function>(begin->getCalledOperand()->stripPointerCasts())
			 : nullptr;
	if (!fn || fn->getName() != kOpenerBegin) {
		error("the end of an opener's call has no beginning (was it made by this plugin's "
		      "front end?)");
		return;
	}
	llvm::Constant *s = opener_site(begin);
	if (!s)
		return;
	llvm::FunctionCallee end = m_.getOrInsertFunction(
		"iosig_opener_end", llvm::FunctionType::get(llvm::Type::getVoidTy(c_), { i8p_ }, false));
	llvm::CallInst::Create(end, { s }, "", mark)->setDebugLoc(mark->getDebugLoc());
	if (mark->arg_size() > 1)
		mark->replaceAllUsesWith(mark->getArgOperand(1));
	mark->eraseFromParent();
}

void Lowering::lower_opener_begin(llvm::CallBase *mark)
{
	unsigned n = nvalues(mark, kOpenerArgs);
	llvm::Constant *s = n == ~0u ? nullptr : opener_site(mark);

	if (!s)
		return;
	llvm::IRBuilder<> b(mark);
	llvm::SmallVector<llvm::Value *, 16> args{ s, b.CreateIntCast(mark->getArgOperand(6), i32_, true),
						   b.CreatePointerCast(mark->getArgOperand(7), i8p_),
						   b.CreateIntCast(mark->getArgOperand(8), i32_, true),
						   b.CreatePointerCast(mark->getArgOperand(9), i8p_) };
	for (unsigned i = 0; i < n; i++)
		args.push_back(mark->getArgOperand(kOpenerArgs + i));
	llvm::FunctionCallee entry = m_.getOrInsertFunction(
		"iosig_opener_begin",
		llvm::FunctionType::get(i8p_, { i8p_, i32_, i8p_, i32_, i8p_ }, true));
	llvm::CallBase *nc = replace_call(mark, entry, args);
	mark->replaceAllUsesWith(b.CreateBitOrPointerCast(nc, mark->getType()));
	mark->eraseFromParent();
}

bool Lowering::run()
{
	static const char *const all[] = { kIntDiv, kIntMod, kBindInt, kBindPtr, kPrepare, kJobwide,
					   kOpenerDone, kOpenerBegin };
	bool any = false;

	for (const char *name : all)
		any |= m_.getFunction(name) != nullptr;
	if (!any)
		return false;
	for (llvm::CallBase *cb : calls_of(kIntDiv))
		lower_arith(cb, false);
	for (llvm::CallBase *cb : calls_of(kIntMod))
		lower_arith(cb, true);
	for (const char *name : { kBindInt, kBindPtr })
		for (llvm::CallBase *cb : calls_of(name))
			lower_bind(cb);
	for (llvm::CallBase *cb : calls_of(kPrepare))
		lower_prepare(cb);
	for (llvm::CallBase *cb : calls_of(kJobwide))
		lower_jobwide(cb);
	/* The ends first: they find their site through the beginnings. */
	for (llvm::CallBase *cb : calls_of(kOpenerDone))
		lower_opener_done(cb);
	for (llvm::CallBase *cb : calls_of(kOpenerBegin))
		lower_opener_begin(cb);
	for (const char *name : all) {
		llvm::Function *f = m_.getFunction(name);

		if (!f)
			continue;
		f->removeDeadConstantUsers();
		if (f->use_empty())
			f->eraseFromParent();
		else
			error(llvm::Twine("'") + name + "' is still called after the iosig pass");
	}
	/* Release builds of clang do not verify IR; what this pass wrote is
	 * checked here (only in modules it changed). */
	std::string problems;
	llvm::raw_string_ostream os(problems);
	if (llvm::verifyModule(m_, &os))
		error("the module is broken after the iosig pass (please report this as an iosig "
		      "bug): " + os.str());
	return true;
}

namespace {

struct LowerPass : llvm::PassInfoMixin<LowerPass> {
	llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &)
	{
		return Lowering(m).run() ? llvm::PreservedAnalyses::none()
					 : llvm::PreservedAnalyses::all();
	}

	/* Also at -O0, where functions are optnone. */
	static bool isRequired() { return true; }
};

} // namespace

} // namespace cp

/* The only symbol the plugin exports (llvm-tutor's shape). */
extern "C" __attribute__((visibility("default"))) llvm::PassPluginLibraryInfo
llvmGetPassPluginInfo()
{
	return { LLVM_PLUGIN_API_VERSION, "iosig", IOSIG_PLUGIN_VERSION, [](llvm::PassBuilder &pb) {
			pb.registerPipelineStartEPCallback(
				[](llvm::ModulePassManager &mpm, llvm::OptimizationLevel) {
					mpm.addPass(cp::LowerPass());
				});
			pb.registerPipelineParsingCallback(
				[](llvm::StringRef name, llvm::ModulePassManager &mpm,
				   llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
					if (name != "iosig-lower")
						return false;
					mpm.addPass(cp::LowerPass());
					return true;
				});
		} };
}
