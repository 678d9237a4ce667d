// Python bindings: saxpy(a, x, y) -> list, device_count(), VARIANT, ARCHS.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <vector>

#include "kernel.h"

#ifndef HIP_SAMPLE_VARIANT
#define HIP_SAMPLE_VARIANT "cpu"
#endif
#ifndef HIP_SAMPLE_ARCHS
#define HIP_SAMPLE_ARCHS ""
#endif

static bool to_floats(PyObject* seq, std::vector<float>& out) {
    PyObject* fast = PySequence_Fast(seq, "expected a sequence of numbers");
    if (!fast) return false;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    out.resize(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
        double v = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1.0 && PyErr_Occurred()) { Py_DECREF(fast); return false; }
        out[static_cast<size_t>(i)] = static_cast<float>(v);
    }
    Py_DECREF(fast);
    return true;
}

static PyObject* saxpy(PyObject*, PyObject* args) {
    float a;
    PyObject *xs, *ys;
    if (!PyArg_ParseTuple(args, "fOO", &a, &xs, &ys)) return nullptr;
    std::vector<float> x, y;
    if (!to_floats(xs, x) || !to_floats(ys, y)) return nullptr;
    if (x.size() != y.size()) {
        PyErr_SetString(PyExc_ValueError, "x and y must have the same length");
        return nullptr;
    }
    const char* err = hip_sample_saxpy(static_cast<int>(x.size()), a, x.data(), y.data());
    if (err) { PyErr_SetString(PyExc_RuntimeError, err); return nullptr; }
    PyObject* out = PyList_New(static_cast<Py_ssize_t>(y.size()));
    for (size_t i = 0; i < y.size(); ++i)
        PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), PyFloat_FromDouble(y[i]));
    return out;
}

static PyObject* device_count(PyObject*, PyObject*) {
    return PyLong_FromLong(hip_sample_device_count());
}

static PyMethodDef methods[] = {
    {"saxpy", saxpy, METH_VARARGS, "saxpy(a, x, y) -> a*x+y computed by the kernel"},
    {"device_count", device_count, METH_NOARGS, "number of HIP devices visible (0 on CPU builds)"},
    {nullptr, nullptr, 0, nullptr},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native", nullptr, -1, methods};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject* m = PyModule_Create(&module);
    if (!m) return nullptr;
    PyModule_AddStringConstant(m, "VARIANT", HIP_SAMPLE_VARIANT);
    PyModule_AddStringConstant(m, "ARCHS", HIP_SAMPLE_ARCHS);
    return m;
}
