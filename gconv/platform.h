/* gconv/platform.h: HIP on AMD, HIP names on CUDA, and what the compile target can do.
 *
 * What is here:
 *   - the runtime: with hipcc, the real <hip/hip_runtime.h>. With nvcc, a small mapping of the
 *     HIP runtime names that gconv, its tests, examples and benchmark use onto the CUDA runtime
 *     (Debian's HIP 5.2 headers for NVIDIA do not compile against CUDA 13). Define
 *     GCONV_USE_HIP_ON_CUDA before including gconv.h to use a real HIP-on-CUDA install instead
 *     (one whose NVIDIA headers match your CUDA version).
 *   - target capabilities, decided from the compile target, for device code:
 *       GCONV_WAVE_SIZE          threads per wavefront/warp (64 on gfx9, 32 on gfx10+ and NVIDIA)
 *       GCONV_HAS_MFMA           AMD matrix cores (gfx908, gfx90a, gfx940)
 *       GCONV_HAS_MMA_SYNC       NVIDIA tensor cores through mma.sync (sm_80 and newer)
 *     In host code these are 0 / 32: ask the device (gconv_device_wave_size) at run time.
 *   - gconv_device_sm_count / gconv_device_wave_size: run-time queries returning 0 on failure.
 *
 * Only names listed below are mapped; using another HIP name in gconv code under nvcc is a
 * compile error on purpose, so that the list stays complete for what the project uses.
 */
#ifndef GCONV_PLATFORM_H
#define GCONV_PLATFORM_H

#if defined(__CUDACC__) && !defined(GCONV_USE_HIP_ON_CUDA)
#define GCONV_PLATFORM_CUDA 1
#include <cuda_runtime.h>

typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaDeviceProp hipDeviceProp_t;
typedef cudaFuncAttribute hipFuncAttribute;
typedef cudaDeviceAttr hipDeviceAttribute_t;

#define hipSuccess cudaSuccess
#define hipErrorNoDevice cudaErrorNoDevice
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipDeviceAttributeWarpSize cudaDevAttrWarpSize
#define hipDeviceAttributeMaxSharedMemoryPerBlock cudaDevAttrMaxSharedMemoryPerBlockOptin

#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDevice cudaGetDevice
#define hipSetDevice cudaSetDevice
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipDeviceReset cudaDeviceReset
#define hipMalloc cudaMalloc
#define hipHostMalloc(p, n, flags) cudaMallocHost(p, n)
#define hipHostFree cudaFreeHost
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipMemGetInfo cudaMemGetInfo
#define hipStreamCreate cudaStreamCreate
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipEventCreate cudaEventCreate
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipFuncSetAttribute(f, attr, v) cudaFuncSetAttribute((const void *)(f), attr, v)
#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...)                              \
    kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)

/* graphs (the benchmark replays launches from a captured graph) and version queries */
typedef cudaGraph_t hipGraph_t;
typedef cudaGraphExec_t hipGraphExec_t;
#define hipStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed
#define hipStreamBeginCapture cudaStreamBeginCapture
#define hipStreamEndCapture cudaStreamEndCapture
#define hipGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define hipGraphLaunch cudaGraphLaunch
#define hipGraphExecDestroy cudaGraphExecDestroy
#define hipGraphDestroy cudaGraphDestroy
#define hipDriverGetVersion cudaDriverGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion

#else
#define GCONV_PLATFORM_HIP 1
#include <hip/hip_runtime.h>
#endif

/* ---- target capabilities (device compilation passes) ------------------------------------ */

#if defined(__HIP_DEVICE_COMPILE__) && defined(__AMDGCN_WAVEFRONT_SIZE)
#define GCONV_WAVE_SIZE __AMDGCN_WAVEFRONT_SIZE
#else
#define GCONV_WAVE_SIZE 32
#endif

#if defined(__HIP_DEVICE_COMPILE__) && (defined(__gfx908__) || defined(__gfx90a__) ||           \
                                        defined(__gfx940__) || defined(__gfx941__) ||           \
                                        defined(__gfx942__))
#define GCONV_HAS_MFMA 1
#else
#define GCONV_HAS_MFMA 0
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GCONV_HAS_MMA_SYNC 1
#else
#define GCONV_HAS_MMA_SYNC 0
#endif

/* ---- run-time device queries -------------------------------------------------------------- */

/* An integer attribute of the current device, 0 if it cannot be asked. */
static inline int gconv_impl_device_attr(hipDeviceAttribute_t attr)
{
    int dev = 0, n = 0;
    if (hipGetDevice(&dev) != hipSuccess || hipDeviceGetAttribute(&n, attr, dev) != hipSuccess)
        return 0;
    return n;
}

/* Multiprocessors / compute units of the current device, 0 if it cannot be asked. */
static inline int gconv_device_sm_count(void)
{
    return gconv_impl_device_attr(hipDeviceAttributeMultiprocessorCount);
}

/* Threads per warp / wavefront of the current device, 0 if it cannot be asked. */
static inline int gconv_device_wave_size(void)
{
    return gconv_impl_device_attr(hipDeviceAttributeWarpSize);
}

#endif /* GCONV_PLATFORM_H */
