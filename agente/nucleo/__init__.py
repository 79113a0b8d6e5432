"""El núcleo que comparten todas las capas: errores, contexto del cliente, ajustes, dinero,
fechas, secretos y los puertos (contratos entre capas que no se importan).

No importa nada del resto del producto (lo comprueban los contratos de import-linter):
``politicas/`` y ``herramientas/`` solo pueden importar de aquí.
"""
