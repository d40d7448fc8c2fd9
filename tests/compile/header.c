/* tests/compile/header.c: compile check of one gconv header on its own.
 *
 * build.ninja compiles this file once per header and compiler, naming the header with
 * -DGCONV_HEADER='"gconv/name.h"'. Including it twice checks the include guard; including
 * nothing else first checks that the header brings everything it needs.
 */
#include GCONV_HEADER
#include GCONV_HEADER

/* ISO C wants at least one declaration of our own in a translation unit. */
typedef int gconv_compile_check_done;
