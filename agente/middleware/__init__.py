"""Middleware del agente: un concepto por módulo, sobre los de LangChain."""
