/* minibench.h -- a stand-in for PolyBench/C 4.2's polybench.h, written for moldtune's tests:
   the same macro names and compile-time switches (POLYBENCH_TIME, POLYBENCH_DUMP_ARRAYS), so
   that a kernel in PolyBench's original layout can be tuned without shipping PolyBench. */
#ifndef MINIBENCH_H
#define MINIBENCH_H
#include <stdio.h>
#include <stdlib.h>

#define POLYBENCH_2D(var, dim1, dim2, ddim1, ddim2) var[dim1][dim2]
#define POLYBENCH_2D_ARRAY_DECL(var, type, dim1, dim2, ddim1, ddim2) \
  type(*var)[dim1][dim2] = (type(*)[dim1][dim2])minibench_alloc((size_t)(dim1) * (dim2) * sizeof(type))
#define POLYBENCH_ARRAY(x) *x
#define POLYBENCH_FREE_ARRAY(x) free((void *)x)

#ifndef POLYBENCH_USE_SCALAR_LB
#define _PB_N n
#else
#define _PB_N N
#endif

void *minibench_alloc(size_t bytes);
void minibench_timer_start(void);
void minibench_timer_stop(void);
void minibench_timer_print(void);

#ifdef POLYBENCH_TIME
#define polybench_start_instruments minibench_timer_start();
#define polybench_stop_instruments minibench_timer_stop();
#define polybench_print_instruments minibench_timer_print();
#else
#define polybench_start_instruments
#define polybench_stop_instruments
#define polybench_print_instruments
#endif

#ifdef POLYBENCH_DUMP_ARRAYS
#define polybench_prevent_dce(func) func
#else
#define polybench_prevent_dce(func)
#endif
#endif
