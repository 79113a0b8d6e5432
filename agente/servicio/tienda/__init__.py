"""La ingesta del back office de la tienda (``docs/conectar-tienda.md``): la forma de cada
registro (``registros``), cómo se aplica sin romper los libros (``aplicar``), los lotes en
JSON lines (``lotes``), las claves de API con alcances (``claves``) y lo que llaman la web
y la CLI (``ingesta``)."""
