"""El cambio de un producto por otro (la operación «sustitucion»): todo lo suyo en esta carpeta (``operaciones/carpetas.py``)."""
