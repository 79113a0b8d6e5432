"""El reenvío de lo que no llegó o llegó roto: todo lo suyo en esta carpeta (``operaciones/carpetas.py``)."""
