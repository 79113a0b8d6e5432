"""El alta sin SQL (issue 43, punto 1; ``docs/empezar-tienda.md``): tiendas, regiones y
personas se crean, se cambian y se desactivan por el servicio, cada cambio anotado en
``cambios_alta`` con quién lo hizo.

De abajo arriba: ``reglas`` (la separación de funciones: quién puede qué, sin base),
``registro`` (quién actúa y la anotación de cada cambio), ``tiendas`` (tiendas y
regiones), ``personal`` (las personas), ``primera`` (el primer administrador, una vez) y
``puerta`` (``Alta``: lo que llama la web, con una conexión del pool por llamada).
"""
