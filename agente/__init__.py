"""Agente de atención al cliente para tiendas: ensambla y sirve (politicas/ decide, herramientas/ actúa)."""
