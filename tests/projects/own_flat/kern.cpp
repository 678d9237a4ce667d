// A HIP kernel and a CPython module around it (no torch), compiled by hipcc for every
// PYTORCH_ROCM_ARCH target (setup.py passes one --offload-arch each).
#include <Python.h>
#include <hip/hip_runtime.h>

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

static PyObject* targets(PyObject*, PyObject*) { return PyUnicode_FromString(FLATEXT_ARCHS); }

static PyObject* devices(PyObject*, PyObject*) {
  int n = 0;
  if (hipGetDeviceCount(&n) != hipSuccess) n = 0;
  return PyLong_FromLong(n);
}

static PyObject* run_scale(PyObject*, PyObject* arg) {
  double a = PyFloat_AsDouble(arg);
  if (PyErr_Occurred()) return nullptr;
  float host[4] = {1, 2, 3, 4};
  float* dev = nullptr;
  if (hipMalloc(&dev, sizeof host) != hipSuccess) return PyErr_Format(PyExc_RuntimeError, "no GPU");
  hipMemcpy(dev, host, sizeof host, hipMemcpyHostToDevice);
  hipLaunchKernelGGL(scale, dim3(1), dim3(4), 0, 0, dev, static_cast<float>(a), 4);
  hipMemcpy(host, dev, sizeof host, hipMemcpyDeviceToHost);
  hipFree(dev);
  return Py_BuildValue("(ffff)", host[0], host[1], host[2], host[3]);
}

static PyMethodDef methods[] = {
    {"targets", targets, METH_NOARGS, "the gfx targets compiled in"},
    {"devices", devices, METH_NOARGS, "HIP devices visible"},
    {"run_scale", run_scale, METH_O, "scale [1,2,3,4] on the GPU"},
    {nullptr, nullptr, 0, nullptr}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kern", nullptr, -1, methods};

PyMODINIT_FUNC PyInit__kern(void) { return PyModule_Create(&module); }
