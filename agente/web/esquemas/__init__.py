"""Las formas de la API (pydantic): lo que entra, lo que sale y cómo se pasa del servicio a
JSON. ``comun`` tiene las del chat, la decisión, la demo y los errores; el resto, una por
tema de ``agente/web/rutas/``."""
