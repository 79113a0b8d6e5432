"""La política de una tienda, administrada: umbrales y matriz versionados
(``politica_tienda``), las escrituras de la autoridad (``gestion_autoridad``: versiones de
la matriz, ámbito de un firmante, bajas), cambios con separación de funciones
(``cambios_politica``) y, al
arrancar, que cada operación declarada tenga su autoridad (``comprobar_operaciones``); el
dominio de cada valor y los nombres de las reglas, para los formularios (``dominio``).
"""
