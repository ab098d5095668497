# SPDX-License-Identifier: MIT
# IosigPlugin.cmake - build targets with the iosig compiler plugin of the
# compiler in use, and link them with libiosig (docs/clang-plugin.md).
#
#   find_package(iosig REQUIRED)               # iosig::iosig
#   include(${iosig_DIR}/IosigPlugin.cmake)    # installed next to iosigConfig.cmake
#   add_executable(app main.c)
#   iosig_enable(app)
#
# iosig_enable(<target>...) gives the target's C and C++ sources
# -fplugin=iosig.so under GCC and -fplugin=/-fpass-plugin=iosig-clang.so
# (the one built for the compiler's major version) under clang, and links
# iosig::iosig.  The plugin files default to the installation this file
# belongs to; IOSIG_GCC_PLUGIN and IOSIG_CLANG_PLUGIN (a path where @V@
# stands for clang's major version) override them, and IOSIG_LIBRARY names
# what to link instead of iosig::iosig.
include_guard(GLOBAL)

get_filename_component(_iosig_plugin_libdir "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
if(NOT DEFINED IOSIG_GCC_PLUGIN)
  set(IOSIG_GCC_PLUGIN "${_iosig_plugin_libdir}/iosig/gcc/iosig.so")
endif()
if(NOT DEFINED IOSIG_CLANG_PLUGIN)
  set(IOSIG_CLANG_PLUGIN "${_iosig_plugin_libdir}/iosig/clang-@V@/iosig-clang.so")
endif()
if(NOT DEFINED IOSIG_LIBRARY)
  set(IOSIG_LIBRARY iosig::iosig)
endif()

# The plugin flags for language `lang` (C or CXX) in *ret.
function(_iosig_plugin_flags lang ret)
  set(id "${CMAKE_${lang}_COMPILER_ID}")
  if(id STREQUAL "GNU")
    if(NOT EXISTS "${IOSIG_GCC_PLUGIN}")
      message(FATAL_ERROR "iosig_enable: no GCC plugin at ${IOSIG_GCC_PLUGIN} "
        "(set IOSIG_GCC_PLUGIN, or build iosig with GCC's plugin headers)")
    endif()
    set(${ret} "-fplugin=${IOSIG_GCC_PLUGIN}" PARENT_SCOPE)
  elseif(id MATCHES "Clang")
    string(REGEX MATCH "^[0-9]+" major "${CMAKE_${lang}_COMPILER_VERSION}")
    string(REPLACE "@V@" "${major}" plugin "${IOSIG_CLANG_PLUGIN}")
    if(NOT EXISTS "${plugin}")
      message(FATAL_ERROR "iosig_enable: no iosig plugin for clang ${major} at ${plugin} "
        "(set IOSIG_CLANG_PLUGIN, or build iosig with llvm-${major}-dev and "
        "libclang-${major}-dev)")
    endif()
    set(${ret} "-fplugin=${plugin};-fpass-plugin=${plugin}" PARENT_SCOPE)
  else()
    message(FATAL_ERROR "iosig_enable: the ${lang} compiler is ${id}; iosig has plugins "
      "for GCC and clang")
  endif()
endfunction()

function(iosig_enable)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  foreach(target ${ARGN})
    foreach(lang C CXX)
      if(lang IN_LIST languages)
        _iosig_plugin_flags(${lang} flags)
        target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:${lang}>:${flags}>")
      endif()
    endforeach()
    target_link_libraries(${target} PRIVATE ${IOSIG_LIBRARY})
  endforeach()
endfunction()
