#include <Python.h>

static PyObject* arch_count(PyObject* self, PyObject* args) {
  return PyLong_FromLong(PYPROJEXT_ARCH_COUNT);
}

static PyMethodDef methods[] = {{"arch_count", arch_count, METH_NOARGS, "targets built"},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_gpu", NULL, -1, methods};

PyMODINIT_FUNC PyInit__gpu(void) { return PyModule_Create(&module); }
