# Todo parte de un Python 3.11 pelado: el entorno virtual se crea solo.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
# Procesos de pytest-xdist: cada uno con su PostgreSQL embebido; por archivo, para que las
# fixtures de módulo (un servidor por archivo) no se repitan. Tres en 2 núcleos: con dos, la
# CPU estaba ocupada el 59 % del tiempo (las pruebas esperan a servidores, subprocesos y
# Chromium); el tercero llena esas esperas.
PROCESOS ?= 3
# Puerto de make demo: make demo PUERTO=8080.
PUERTO ?= 8000
SELLO  := $(VENV)/.instalado

.PHONY: install demo test lint bench clean

$(SELLO): pyproject.toml requirements.lock
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Falta $(PYTHON): instala Python 3.11 o usa 'make PYTHON=python3 ...'"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e ".[dev]"
	touch $(SELLO)

install: $(SELLO)

demo: $(SELLO)
	$(BIN)/agente demo --port $(PUERTO)

lint: $(SELLO)
	$(BIN)/ruff check agente politicas herramientas operaciones caja nucleo tests bench
	$(BIN)/lint-imports

test: $(SELLO) lint
	$(BIN)/python -m pytest -n $(PROCESOS) --dist loadfile --durations=25

bench: $(SELLO)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
