/* Counts a PolyBench/C kernel's floating-point operations by running it (scripts/reach.py).
 *
 * The kernel's file is compiled as C++ with this header forced in first (`-include`) and
 * `-DPOLYBENCH_TIME`; the header includes the C library headers PolyBench uses, then renames
 * `double` and `float` to `counted`, a number that counts each +, -, *, / and each sqrt, exp
 * and pow applied to it while PolyBench's timer runs (comparisons, negations and conversions
 * are not counted, as in the usual FLOP count). It replaces PolyBench's runtime
 * (utilities/polybench.c): the timer switches the count on and off, `polybench_timer_print`
 * prints `flops N` and `elements N` (the array elements PolyBench allocated).
 *
 * The count is that of the program as written, at the dataset it is compiled for: a kernel
 * that skips work on its data counts what it did. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <type_traits>

static unsigned long long counted_flops, counted_elements;
static bool counting;

struct counted {
  double v;
  counted() = default;
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  constexpr counted(T x) : v(static_cast<double>(x)) {}
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  explicit constexpr operator T() const {
    return static_cast<T>(v);
  }
};

static inline counted op(double x) {
  counted_flops += counting;
  return counted(x);
}
static inline double val(counted x) { return x.v; }
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
static inline double val(T x) {
  return static_cast<double>(x);
}
template <class A, class B>
constexpr bool one_counted =
    std::is_same_v<A, counted> || std::is_same_v<B, counted>;

#define COUNTED_BINARY(OP, ASSIGN)                                                                \
  template <class A, class B, class = std::enable_if_t<one_counted<A, B>>>                      \
  static inline counted operator OP(A a, B b) {                                                 \
    return op(val(a) OP val(b));                                                                \
  }                                                                                             \
  template <class B>                                                                            \
  static inline counted &operator ASSIGN(counted &a, B b) {                                     \
    return a = a OP b;                                                                          \
  }
COUNTED_BINARY(+, +=)
COUNTED_BINARY(-, -=)
COUNTED_BINARY(*, *=)
COUNTED_BINARY(/, /=)

#define COUNTED_COMPARE(OP)                                                                       \
  template <class A, class B, class = std::enable_if_t<one_counted<A, B>>>                      \
  static inline bool operator OP(A a, B b) {                                                    \
    return val(a) OP val(b);                                                                    \
  }
COUNTED_COMPARE(<)
COUNTED_COMPARE(<=)
COUNTED_COMPARE(>)
COUNTED_COMPARE(>=)
COUNTED_COMPARE(==)
COUNTED_COMPARE(!=)

static inline counted operator-(counted a) { return counted(-a.v); }
static inline counted operator+(counted a) { return a; }
static inline counted sqrt(counted a) { return op(sqrt(a.v)); }
static inline counted sqrtf(counted a) { return op(sqrt(a.v)); }
static inline counted exp(counted a) { return op(exp(a.v)); }
static inline counted expf(counted a) { return op(exp(a.v)); }
template <class A, class B, class = std::enable_if_t<one_counted<A, B>>>
static inline counted pow(A a, B b) {
  return op(pow(val(a), val(b)));
}
template <class A, class B, class = std::enable_if_t<one_counted<A, B>>>
static inline counted powf(A a, B b) {
  return op(pow(val(a), val(b)));
}

/* PolyBench's runtime, counting instead of timing. */
void polybench_timer_start() { counting = true; }
void polybench_timer_stop() { counting = false; }
void polybench_timer_print() {
  printf("flops %llu\nelements %llu\n", counted_flops, counted_elements);
}
void polybench_flush_cache() {}
void polybench_prepare_instruments() {}
void *polybench_alloc_data(unsigned long long n, int size) {
  counted_elements += n;
  void *p = calloc(n, size);
  if (!p) {
    fprintf(stderr, "counted: cannot allocate %llu elements\n", n);
    exit(1);
  }
  return p;
}
void polybench_free_data(void *p) { free(p); }

#define double counted
#define float counted
