# ctest script: libseqrt.so exports only seqrt_* functions and has the SONAME
# libseqrt.so.<ABI version>.
#   cmake -DLIBRARY=<path> -DABI_VERSION=<n> -P check_exports.cmake
find_program(NM nm REQUIRED)
find_program(READELF readelf REQUIRED)
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY}
                OUTPUT_VARIABLE symbols RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(count 0)
foreach(line IN LISTS lines)
  # "<address> <type> <name>[@@version]"; type A is the version node itself.
  if(line MATCHES "^[0-9a-f]+ ([A-Za-z]) ([^@]+)")
    set(type ${CMAKE_MATCH_1})
    set(name ${CMAKE_MATCH_2})
    if(type STREQUAL "A")
      continue()
    endif()
    if(NOT name MATCHES "^seqrt_")
      message(FATAL_ERROR "libseqrt.so exports '${name}' (type ${type}); "
                          "only seqrt_* symbols may be exported")
    endif()
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count LESS 40)
  message(FATAL_ERROR "expected the C API's functions to be exported, found "
                      "${count} seqrt_* symbols in ${LIBRARY}")
endif()
execute_process(COMMAND ${READELF} -d ${LIBRARY} OUTPUT_VARIABLE dynamic)
if(NOT dynamic MATCHES "Library soname: \\[libseqrt\\.so\\.${ABI_VERSION}\\]")
  message(FATAL_ERROR "SONAME of ${LIBRARY} is not libseqrt.so.${ABI_VERSION}:"
                      "\n${dynamic}")
endif()
message(STATUS "${count} seqrt_* symbols exported, SONAME "
               "libseqrt.so.${ABI_VERSION}")
