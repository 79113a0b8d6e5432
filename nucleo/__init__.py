"""El núcleo que comparten todas las capas: errores, contexto del cliente, ajustes, dinero,
fechas, secretos, los puertos (contratos entre capas que no se importan) y las operaciones
con efecto declaradas (``operaciones``), que leen todas las capas.

No importa nada del resto del producto (lo comprueban los contratos de import-linter):
``politicas/`` y ``herramientas/`` solo pueden importar de aquí.
"""
