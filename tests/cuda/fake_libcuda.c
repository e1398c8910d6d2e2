/* A stand-in for the NVIDIA driver's libcuda.so, for the launch plumbing tests (no GPU here).
   "Device" memory is host memory. A launch runs nothing unless FAKE_CUDA_IDENTITY is set, when
   it copies the first argument array into the first result (the kernel of x -> x * 1.0 with
   rank 1: params are errors, out0, x, shape, stride, n, flat); FAKE_CUDA_STATUS makes it report
   that status as a failing element would. FAKE_CUDA_BAD_PTX fails the module load with a log. */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

static unsigned last_grid, last_block;
void fake_last_launch(unsigned *grid, unsigned *block) { *grid = last_grid; *block = last_block; }

int cuInit(unsigned flags) { return 0; }
int cuDeviceGetCount(int *n) { *n = getenv("FAKE_CUDA_NO_DEVICE") ? 0 : 1; return 0; }
int cuDeviceGet(int *d, int ordinal) { *d = ordinal; return 0; }
int cuDeviceGetAttribute(int *v, int attribute, int device) {
    *v = attribute == 75 ? 9 : attribute == 76 ? 0 : attribute == 16 ? 2 : 0;
    return 0;
}
int cuDevicePrimaryCtxRetain(void **ctx, int device) { *ctx = (void *)0x1; return 0; }
int cuCtxSetCurrent(void *ctx) { return 0; }
int cuCtxSynchronize(void) { return 0; }
int cuModuleLoadDataEx(void **module, const char *image, unsigned n, int *options, void **values) {
    if (getenv("FAKE_CUDA_BAD_PTX")) {
        for (unsigned k = 0; k < n; k++)
            if (options[k] == 5) strcpy((char *)values[k], "ptxas fatal   : a fake JIT log line");
        return 218;
    }
    *module = strstr(image, ".entry srcgrad_kernel") ? (void *)0x2 : NULL;
    return *module ? 0 : 218;
}
int cuModuleGetFunction(void **fn, void *module, const char *name) {
    if (strcmp(name, "srcgrad_kernel")) return 500;
    *fn = (void *)0x3;
    return 0;
}
int cuMemAlloc_v2(uint64_t *ptr, size_t bytes) { *ptr = (uint64_t)malloc(bytes); return *ptr ? 0 : 2; }
int cuMemFree_v2(uint64_t ptr) { free((void *)ptr); return 0; }
int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes) { memcpy((void *)dst, src, bytes); return 0; }
int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes) { memcpy(dst, (void *)src, bytes); return 0; }
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **params, void **extra) {
    last_grid = gx; last_block = bx;
    int64_t *errors = *(int64_t **)params[0];
    if (getenv("FAKE_CUDA_STATUS")) errors[0] = atoi(getenv("FAKE_CUDA_STATUS"));
    if (getenv("FAKE_CUDA_IDENTITY")) {
        double *out = *(double **)params[1], *x = *(double **)params[2];
        int64_t n = *(int64_t *)params[5];
        for (int64_t i = 0; i < n; i++) out[i] = x[i];
    }
    return 0;
}
int cuGetErrorName(int status, const char **name) {
    *name = status == 218 ? "CUDA_ERROR_INVALID_PTX" : status == 500 ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_UNKNOWN";
    return 0;
}
int cuGetErrorString(int status, const char **words) { *words = "a fake driver's error"; return 0; }

/* what the GPU benchmark uses besides: device copies and events (each "kernel" takes 0.5 ms) */
int cuMemcpyDtoD_v2(uint64_t dst, uint64_t src, size_t bytes) { memcpy((void *)dst, (void *)src, bytes); return 0; }
int cuEventCreate(void **event, unsigned flags) { *event = malloc(1); return 0; }
int cuEventRecord(void *event, void *stream) { return 0; }
int cuEventSynchronize(void *event) { return 0; }
int cuEventElapsedTime(float *ms, void *start, void *stop) { *ms = 0.5f; return 0; }
int cuEventDestroy_v2(void *event) { free(event); return 0; }
