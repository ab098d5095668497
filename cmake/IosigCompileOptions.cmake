# Warning, sanitizer and hardening flags shared by every C and C++ target.
set(IOSIG_WARN_C -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes
    -Wstrict-prototypes -Wno-unused-parameter -Wno-missing-field-initializers)
set(IOSIG_WARN_CXX -Wall -Wextra -Wformat=2 -Wno-unused-parameter
    -Wno-missing-field-initializers)
if(IOSIG_WERROR)
  list(APPEND IOSIG_WARN_C -Werror)
  list(APPEND IOSIG_WARN_CXX -Werror)
endif()
add_compile_options("$<$<COMPILE_LANGUAGE:C>:${IOSIG_WARN_C}>"
                    "$<$<COMPILE_LANGUAGE:CXX>:${IOSIG_WARN_CXX}>")
add_compile_definitions(_GNU_SOURCE)

if(IOSIG_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# iosig_add_fuzzer(name source...) - a libFuzzer target (only with IOSIG_FUZZ).
function(iosig_add_fuzzer name)
  if(NOT IOSIG_FUZZ)
    return()
  endif()
  add_executable(${name} ${ARGN})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${name} PRIVATE iosig_internal)
endfunction()

# A fuzzing build instruments everything for coverage; fuzz targets add the
# libFuzzer main through iosig_add_fuzzer().
if(IOSIG_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "IOSIG_FUZZ needs clang: configure with -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
