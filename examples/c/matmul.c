/*
 * Multiplies two matrices through the myns C ABI (include/myns.h): on CUDA
 * when torch sees a GPU, else on the CPU. Checks the result, then shows how
 * an error comes back. No libtorch headers, no Python.
 *
 * Build (tests/c_abi.rs does this and runs it):
 *   cc -std=c11 examples/c/matmul.c -I include -L target/release -lmyns \
 *      -Wl,-rpath,$PWD/target/release -o matmul
 */
#include <stdio.h>
#include <stdlib.h>

#include "myns.h"

/* Calls a myns function; on failure prints the library's message and exits. */
#define CHECK(call)                                                                  \
  do {                                                                               \
    int status_ = (call);                                                            \
    if (status_ != MYNS_OK) {                                                        \
      fprintf(stderr, "%s failed (status %d): %s\n", #call, status_, myns_last_error()); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

/* Replaces *t by a copy on `device` (enum myns_device_type). */
static void move_to(myns_tensor* t, int32_t device) {
  myns_tensor moved;
  CHECK(myns_tensor_to_device(*t, device, 0, &moved));
  myns_tensor_free(*t);
  *t = moved;
}

int main(void) {
  printf("myns %s (ABI %d), built for torch %s, %zu ops:", myns_version(), myns_abi_version(),
         myns_torch_version(), myns_op_count());
  for (size_t i = 0; i < myns_op_count(); ++i) printf(" %s", myns_op_name(i));
  printf("\n");
  if (myns_abi_version() != MYNS_ABI_VERSION) {
    fprintf(stderr, "myns.h is ABI %d but the library is ABI %d\n", MYNS_ABI_VERSION, myns_abi_version());
    return 1;
  }

  /* a: 2x3, b: 3x2, row major. */
  const float a_data[] = {1, 2, 3, 4, 5, 6};
  const float b_data[] = {7, 8, 9, 10, 11, 12};
  const int64_t a_sizes[] = {2, 3}, b_sizes[] = {3, 2};
  myns_tensor a, b, c;
  CHECK(myns_tensor_from_data(a_data, a_sizes, 2, MYNS_FLOAT32, &a));
  CHECK(myns_tensor_from_data(b_data, b_sizes, 2, MYNS_FLOAT32, &b));
  if (myns_cuda_device_count() > 0) {
    move_to(&a, MYNS_CUDA);
    move_to(&b, MYNS_CUDA);
  }

  CHECK(myns_matmul(a, b, &c)); /* c = a @ b, through the PyTorch dispatcher */

  int64_t ndim, sizes[2];
  int32_t device, index;
  float out[4];
  CHECK(myns_tensor_ndim(c, &ndim));
  CHECK(myns_tensor_sizes(c, sizes, 2));
  CHECK(myns_tensor_device(c, &device, &index));
  CHECK(myns_tensor_copy_to(c, out, sizeof out));
  printf("a @ b on %s: [%lld, %lld] = [[%g, %g], [%g, %g]]\n", device == MYNS_CUDA ? "cuda" : "cpu",
         (long long)sizes[0], (long long)sizes[1], out[0], out[1], out[2], out[3]);
  const float expected[] = {58, 64, 139, 154};
  int ok = ndim == 2 && sizes[0] == 2 && sizes[1] == 2;
  for (int i = 0; i < 4; ++i) ok = ok && out[i] == expected[i];

  /* a @ a: the inner dimensions differ, so the op refuses, naming the argument. */
  myns_tensor bad;
  int status = myns_matmul(a, a, &bad);
  printf("a @ a: status %d, \"%s\"\n", status, myns_last_error());
  ok = ok && status == MYNS_ERROR && bad == NULL;

  myns_tensor_free(a);
  myns_tensor_free(b);
  myns_tensor_free(c);
  printf("%s\n", ok ? "ok" : "WRONG RESULT");
  return ok ? 0 : 1;
}
