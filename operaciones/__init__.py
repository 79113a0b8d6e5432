"""Las operaciones con efecto, una carpeta cada una (``operaciones/<operacion>/``).

Cada carpeta reúne todo lo propio de una operación; nadie fuera de ella la nombra: el
registro de herramientas, ``REGLAS``, los pasos del modelo offline y la lista de
operaciones del núcleo recorren las carpetas (``operaciones.carpetas``). Las piezas de
una carpeta y a qué capa pertenece cada una: ``operaciones/carpetas.py`` y
``docs/arquitectura.md`` («Añadir una operación con efecto»).
"""
