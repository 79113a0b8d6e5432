"""Modificar los artículos de un pedido pendiente: todo lo suyo en esta carpeta (``operaciones/carpetas.py``)."""
