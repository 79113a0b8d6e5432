"""El cambio de dirección de envío: todo lo suyo en esta carpeta (``operaciones/carpetas.py``)."""
