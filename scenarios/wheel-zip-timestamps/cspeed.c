#include <Python.h>
static PyObject *add(PyObject *self, PyObject *args) { long a, b; if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL; return PyLong_FromLong(a + b); }
static PyMethodDef methods[] = {{"add", add, METH_VARARGS, "add two numbers"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cspeed", NULL, -1, methods};
PyMODINIT_FUNC PyInit_cspeed(void) { return PyModule_Create(&module); }
