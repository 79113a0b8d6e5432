"""La base de datos del producto: de dónde sale, cómo se conecta y qué hay dentro.

- ``url``: ``DATABASE_URL`` o, sin ella, el PostgreSQL embebido (``embebido``: arrancar,
  soltar, parar y estado);
- ``pool``: el pool de conexiones del proceso, la comprobación de conexión y lo que
  significa «la base no responde» (``ERRORES_BD_CAIDA``);
- ``migraciones``: ``sql/NNN_*.sql`` en orden y el esquema del checkpointer;
- ``checkpointer``: ``PostgresSaver`` sobre el pool, sin su candado de instancia.

Las claves de los candados consultivos viven en ``nucleo.claves_candado``: las usan
también la política y las herramientas (el candado de cada cliente), que solo importan el núcleo.

Sin re-exportaciones.
"""
