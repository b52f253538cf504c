/*
 * gpu_burn -- a GPU task for bench/gpu-real: keeps every multiprocessor of
 * the one device CUDA sees busy for MS milliseconds, then prints what the
 * task saw as one JSON object (its output):
 *
 *   {"visible": CUDA_VISIBLE_DEVICES, "uuid": the device's UUID as CUDA
 *    reports it, "name": ..., "start_ns": process start, "kernel_ns":
 *    kernel start, "end_ns": kernel end (CLOCK_REALTIME, ns)}
 *
 * so the benchmark can tell the host's share of the idle time between two
 * tasks (one task's end to the next process's start) from the task's own
 * (CUDA's initialisation in the new process).
 *
 *   nvcc -O2 -o gpu_burn bench/gpu_burn.cu && ./gpu_burn 500
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Spins on the GPU's global timer (ns), so the time does not depend on
 * the clock rate. */
__global__ void spin(unsigned long long ns, int *done)
{
    unsigned long long start, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - start < ns);
    if (threadIdx.x == 0 && blockIdx.x == 0)
        *done = 1;
}

int main(int argc, char **argv)
{
    long long start = now_ns();
    int ms = argc > 1 ? atoi(argv[1]) : 500;
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, 0);
    if (e != cudaSuccess) {
        fprintf(stderr, "gpu_burn: no CUDA device: %s\n", cudaGetErrorString(e));
        return 1;
    }
    int *done;
    if ((e = cudaMalloc(&done, sizeof *done)) != cudaSuccess) {
        fprintf(stderr, "gpu_burn: cudaMalloc: %s\n", cudaGetErrorString(e));
        return 1;
    }
    long long kernel = now_ns();
    spin<<<p.multiProcessorCount * 4, 256>>>((unsigned long long)ms * 1000000ULL, done);
    if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
        fprintf(stderr, "gpu_burn: kernel: %s\n", cudaGetErrorString(e));
        return 1;
    }
    long long end = now_ns();
    const unsigned char *u = (const unsigned char *)p.uuid.bytes;
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    printf("{\"visible\": \"%s\", \"uuid\": \"GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
           "%02x%02x%02x%02x%02x%02x\", \"name\": \"%s\", \"start_ns\": %lld, \"kernel_ns\": %lld, "
           "\"end_ns\": %lld}\n",
           visible ? visible : "", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
           u[10], u[11], u[12], u[13], u[14], u[15], p.name, start, kernel, end);
    return 0;
}
