"""La cancelación de un pedido sin enviar: todo lo suyo en esta carpeta (``operaciones/carpetas.py``)."""
