/* SPDX-License-Identifier: MIT */
/*
 * compat.h - the differences between the clang/LLVM versions the plugin is
 * built for (14 and 16), in one place, like the kernel's gcc-common.h.
 * Everything else uses these names and is written once.
 */
#ifndef IOSIG_CLANG_COMPAT_H
#define IOSIG_CLANG_COMPAT_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/Version.h"
#include "clang/Sema/ExternalSemaSource.h"
#include "clang/Sema/Sema.h"
#include "llvm/Config/llvm-config.h"

namespace cp {

/* An ordinary (narrow, unprefixed) string literal. */
#if CLANG_VERSION_MAJOR >= 15
constexpr clang::StringLiteral::StringKind kOrdinaryString = clang::StringLiteral::Ordinary;
#else
constexpr clang::StringLiteral::StringKind kOrdinaryString = clang::StringLiteral::Ascii;
#endif

/* A compound statement; clang 15 added floating-point options to it. */
inline clang::CompoundStmt *make_compound(const clang::ASTContext &ctx,
					  llvm::ArrayRef<clang::Stmt *> stmts,
					  clang::SourceLocation lb, clang::SourceLocation rb)
{
#if CLANG_VERSION_MAJOR >= 15
	return clang::CompoundStmt::Create(ctx, stmts, clang::FPOptionsOverride(), lb, rb);
#else
	return clang::CompoundStmt::Create(ctx, stmts, lb, rb);
#endif
}

/*
 * Hands an external Sema source to Sema.  Since clang 16 Sema holds it by
 * an intrusive reference count and frees it; before, the caller keeps it.
 */
inline void add_external_source(clang::Sema &sema, clang::ExternalSemaSource *src)
{
	sema.addExternalSource(src);
}

} // namespace cp

#endif /* IOSIG_CLANG_COMPAT_H */
